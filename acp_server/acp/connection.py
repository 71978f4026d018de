"""One client connection: the handshake, the session registry, and prompts.

Capabilities advertised in `initialize` are exactly what works in this build; each later
feature adds its own flag when it lands.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import msgspec
from anyio.abc import TaskGroup

from acp_server import __version__
from acp_server.rpc.dispatch import JsonRpcDispatcher, RpcError, decode_params
from acp_server.rpc.peer import IncomingRequest, Peer
from protocol import errors
from protocol.initialize import (
    AgentCapabilities,
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethod,
    ClientCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResponse,
)
from protocol.session import (
    CancelNotification,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
)

from .sessions import AcpSession, SessionRegistry, new_session_id

if TYPE_CHECKING:
    from acp_server.models.base import ModelProvider

# The runtime (agent, session, prompting modules) is imported on the first session/new, not
# here: every editor spawn pays for what `initialize` imports before it is answered.

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
"""The only ACP version we speak; a client asking for another gets this one (spec rule)."""

AGENT_INFO = Implementation(name="acp-server", title="acp-server", version=__version__)

NO_MODEL_MESSAGE = (
    "No model is configured. Start acp-server with --model SPEC or set ACP_SERVER_MODEL; "
    "SPEC is script:PATH (a scripted model file) or echo."
)


@dataclass(frozen=True)
class BridgeOptions:
    """What the command line decided for every session."""

    model: ModelProvider | None = None


class AcpConnection:
    """ACP state of one client: its capabilities and its sessions."""

    def __init__(self, peer: Peer, task_group: TaskGroup, options: BridgeOptions) -> None:
        self.peer = peer
        self.options = options
        self.client_capabilities = ClientCapabilities()
        self.auth_methods: list[AuthMethod] = []
        self.sessions = SessionRegistry()
        self._task_group = task_group
        self._initialized = anyio.Event()
        self._dispatcher: JsonRpcDispatcher | None = None

    def register(self, dispatcher: JsonRpcDispatcher) -> None:
        """Install this connection's handlers."""
        self._dispatcher = dispatcher
        dispatcher.request("initialize", self.initialize)
        dispatcher.request("authenticate", self.authenticate)
        dispatcher.request("session/new", self.new_session)
        dispatcher.request("session/prompt", self.prompt)
        dispatcher.notification("session/cancel", self.cancel)

    async def preload_when_initialized(self) -> None:
        """Load the dispatcher after the handshake answer is out, so it never delays it."""
        await self._initialized.wait()
        await self.peer.writer.drained()
        if self._dispatcher is not None:
            await self._dispatcher.load()

    async def dispose(self) -> None:
        """Dispose every session's agent (running turns end `disposed`), then forget them."""
        async with anyio.create_task_group() as tg:
            for session in self.sessions:
                if session.handle is not None:
                    tg.start_soon(session.handle.dispose)
        for session in self.sessions:
            self.sessions.remove(session.id)

    # -- handlers -------------------------------------------------------------------------

    async def initialize(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> InitializeResponse:
        init = decode_params(params, InitializeRequest)
        self.client_capabilities = init.client_capabilities
        if init.protocol_version != PROTOCOL_VERSION:
            log.info(
                "client asked for protocol %d; answering %d",
                init.protocol_version,
                PROTOCOL_VERSION,
            )
        self._initialized.set()
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            auth_methods=self.auth_methods,
            agent_info=AGENT_INFO,
        )

    async def authenticate(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> AuthenticateResponse:
        auth = decode_params(params, AuthenticateRequest)
        known = [method.id for method in self.auth_methods]
        if auth.method_id not in known:
            raise RpcError(
                errors.INVALID_PARAMS,
                "Invalid params",
                f"unknown authentication method {auth.method_id!r}; advertised: {known}",
            )
        return AuthenticateResponse()

    async def new_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> NewSessionResponse:
        new = decode_params(params, NewSessionRequest)
        require_absolute("cwd", new.cwd)
        extra_roots = new.additional_directories or []
        for path in extra_roots:
            require_absolute("additionalDirectories", path)
        session_id = new_session_id()
        handle = None
        if self.options.model is not None:
            from acp_server.agent.agent import spawn_agent
            from acp_server.agent.loop import AgentConfig
            from acp_server.session.log import SessionLog

            from .updates import SessionUpdates

            handle = spawn_agent(
                SessionLog(session_id), AgentConfig(model=self.options.model), self._task_group
            )
            handle.agent.subscribe(SessionUpdates(self.peer, session_id))
        self.sessions.add(
            AcpSession(session_id, new.cwd, handle, list(extra_roots), list(new.mcp_servers))
        )
        log.info("session %s created in %s", session_id, new.cwd)
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, request: IncomingRequest, params: msgspec.Raw | None) -> PromptResponse:
        from acp_server.agent.cancellation import UserCancel

        from .content import parts_from_prompt
        from .prompting import stop_reason_for

        prompt = decode_params(params, PromptRequest)
        session = self._session(prompt.session_id)
        agent = session.agent
        if agent is None:
            raise RpcError(errors.AUTH_REQUIRED, "Authentication required", NO_MODEL_MESSAGE)
        ticket = agent.followup(parts_from_prompt(prompt.prompt))

        # `$/cancel_request` for this prompt stops it alone: dropped if queued, aborted (queue
        # kept) if running. Admitted only now, so a cancel on the next line finds it queued.
        def stop_this_prompt() -> None:
            if not ticket.withdraw() and ticket.state == "running":
                agent.cancel(UserCancel(), keep_inbox=True)

        request.on_cancel_request = stop_this_prompt
        request.admit()
        return PromptResponse(stop_reason=stop_reason_for(await ticket.wait()))

    async def cancel(self, params: msgspec.Raw | None) -> None:
        try:
            cancel = msgspec.json.decode(params or b"null", type=CancelNotification)
        except msgspec.DecodeError as exc:
            log.warning("ignoring a malformed session/cancel: %s", exc)
            return
        session = self.sessions.get(cancel.session_id)
        if session is None or session.agent is None:
            return  # cancelling nothing is a no-op; a notification cannot be answered
        from acp_server.agent.cancellation import UserCancel

        from .prompting import wants_keep_inbox

        session.agent.cancel(UserCancel(), keep_inbox=wants_keep_inbox(cancel.meta))

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(
                errors.RESOURCE_NOT_FOUND, "Session not found", f"no session {session_id!r}"
            )
        return session


def require_absolute(field: str, path: str) -> None:
    """ACP paths are absolute; a relative one is a client bug answered with -32602."""
    if not os.path.isabs(path):
        raise RpcError(
            errors.INVALID_PARAMS, "Invalid params", f"{field} must be an absolute path: {path!r}"
        )
