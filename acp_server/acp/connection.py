"""One client connection: the handshake, the session registry, and prompts.

Capabilities advertised in `initialize` are exactly what works in this build; each later
feature adds its own flag when it lands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import msgspec
from anyio.abc import TaskGroup

from acp_server import __version__
from acp_server.process import ProcessRegistry
from acp_server.rpc.dispatch import JsonRpcDispatcher, RequestHandler, RpcError, decode_params
from acp_server.rpc.peer import IncomingRequest, Peer
from acp_server.tools.budget import ToolBudget
from protocol import errors
from protocol.content import TextContent
from protocol.initialize import (
    AgentCapabilities,
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethod,
    ClientCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    McpCapabilities,
    PromptCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
)
from protocol.session import CancelNotification, PromptRequest, PromptResponse
from protocol.session_update import AgentMessageChunk

from .modes import slash_command
from .sessions import AcpSession, SessionRegistry

if TYPE_CHECKING:
    from acp_server.determinism import SequentialIds
    from acp_server.models.base import ModelProvider
    from acp_server.tools.permissions import Mode

    from .lifecycle import SessionLifecycle

# The runtime (agent, session, prompting modules) is imported on the first session/new, not
# here: every editor spawn pays for what `initialize` imports before it is answered.

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
"""The only ACP version we speak; a client asking for another gets this one (spec rule)."""

AGENT_INFO = Implementation(name="acp-server", title="acp-server", version=__version__)

SESSION_METHODS = {
    "session/new": "new_session",
    "session/load": "load_session",
    "session/resume": "resume_session",
    "session/list": "list_sessions",
    "session/close": "close_session",
    "session/delete": "delete_session",
    "session/set_mode": "set_mode",
    "session/set_config_option": "set_config_option",
}

AGENT_CAPABILITIES = AgentCapabilities(
    load_session=True,
    # Images go to models that take them; embedded resources become context text.
    prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
    # stdio and streamable HTTP MCP servers are tested; SSE is not advertised.
    mcp_capabilities=McpCapabilities(http=True),
    session_capabilities=SessionCapabilities(
        list=SessionListCapabilities(),
        resume=SessionResumeCapabilities(),
        close=SessionCloseCapabilities(),
        delete=SessionDeleteCapabilities(),
    ),
)
"""Exactly what works in this build."""

CONFIGURE_MODEL = "configure-model"

NO_MODEL_MESSAGE = (
    "No model is configured. Start acp-server with --model SPEC, set ACP_SERVER_MODEL=SPEC, or "
    "set default_model in $XDG_CONFIG_HOME/acp-server/config.toml. SPEC is openai:MODEL "
    "(OPENAI_API_KEY, OPENAI_BASE_URL for local servers), anthropic:MODEL (ANTHROPIC_API_KEY), "
    "script:PATH or echo."
)


@dataclass(frozen=True)
class BridgeOptions:
    """What the command line decided for every session."""

    data_dir: Path
    processes: ProcessRegistry
    """Where every child process of every session is registered (the server's, created at
    start-up and stopped at shutdown)."""
    model: ModelProvider | None = None
    model_spec: str | None = None
    offered_models: tuple[str, ...] = ()
    """Model specs offered as the `model` config option (the current one included)."""
    load_model: Callable[[str], ModelProvider] | None = None
    """Loads another offered model when a session switches to it."""
    mode: Mode = "default"
    ids: SequentialIds | None = None
    """Deterministic mode's id factory for sessions, turns and messages; None: random ids."""
    tool_budget: ToolBudget = field(default_factory=ToolBudget)
    """How much of a tool's result reaches the model (`[tools]` of the config file)."""


class AcpConnection:
    """ACP state of one client: its capabilities and its sessions."""

    def __init__(self, peer: Peer, task_group: TaskGroup, options: BridgeOptions) -> None:
        self.peer = peer
        self.options = options
        self.client_capabilities = ClientCapabilities()
        # Without a model nothing can answer a prompt; the auth method tells clients how to
        # configure one (prompts answer -32000 with the same message).
        self.auth_methods: list[AuthMethod] = (
            []
            if options.model is not None
            else [
                AuthMethod(
                    id=CONFIGURE_MODEL, name="Configure a model", description=NO_MODEL_MESSAGE
                )
            ]
        )
        self._providers: dict[str, ModelProvider] = (
            {options.model_spec: options.model}
            if options.model is not None and options.model_spec
            else {}
        )
        self.sessions = SessionRegistry()
        self.task_group = task_group
        self._initialized = anyio.Event()
        self._dispatcher: JsonRpcDispatcher | None = None
        self._lifecycle: SessionLifecycle | None = None

    @property
    def lifecycle(self) -> SessionLifecycle:
        """The session methods (imported on first use: not needed to answer `initialize`)."""
        if self._lifecycle is None:
            from .lifecycle import SessionLifecycle

            self._lifecycle = SessionLifecycle(self, self.options.data_dir)
        return self._lifecycle

    def register(self, dispatcher: JsonRpcDispatcher) -> None:
        """Install this connection's handlers."""
        self._dispatcher = dispatcher
        dispatcher.request("initialize", self.initialize)
        dispatcher.request("authenticate", self.authenticate)
        for method, handler_name in SESSION_METHODS.items():
            dispatcher.request(method, self._lifecycle_handler(handler_name))
        dispatcher.request("session/prompt", self.prompt)
        dispatcher.notification("session/cancel", self.cancel)

    async def preload_when_initialized(self) -> None:
        """Load the dispatcher after the handshake answer is out, so it never delays it."""
        await self._initialized.wait()
        await self.peer.writer.drained()
        if self._dispatcher is not None:
            await self._dispatcher.load()

    def provider_for(self, spec: str) -> ModelProvider:
        """The provider of an offered model spec, loaded once per connection."""
        provider = self._providers.get(spec)
        if provider is None:
            if self.options.load_model is None:
                raise ValueError(f"cannot load model {spec!r}")
            provider = self.options.load_model(spec)
            self._providers[spec] = provider
        return provider

    def _lifecycle_handler(self, name: str) -> RequestHandler:
        async def handle(request: IncomingRequest, params: msgspec.Raw | None) -> object:
            method: RequestHandler = getattr(self.lifecycle, name)
            return await method(request, params)

        return handle

    async def dispose(self) -> None:
        """Dispose every session (running turns end `disposed`) and close its journal."""
        if self._lifecycle is None:
            return
        lifecycle = self._lifecycle

        async def release(session: AcpSession) -> None:
            await lifecycle.release(session, cancel_first=False)

        async with anyio.create_task_group() as tg:
            for session in self.sessions:
                tg.start_soon(release, session)
        from acp_server.models.http import close_provider

        for provider in self._providers.values():
            await close_provider(provider)

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
            agent_capabilities=AGENT_CAPABILITIES,
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

    async def prompt(self, request: IncomingRequest, params: msgspec.Raw | None) -> PromptResponse:
        from acp_server.agent.cancellation import UserCancel

        from .content import parts_from_prompt, read_resource_links
        from .prompting import stop_reason_for

        prompt = decode_params(params, PromptRequest)
        session = self._session(prompt.session_id)
        text = "\n".join(p.text for p in prompt.prompt if isinstance(p, TextContent))
        command = slash_command(text) if len(prompt.prompt) == 1 else None
        if command is not None:
            request.admit()
            return await self._run_command(session, *command)
        agent = session.agent
        if agent is None:
            raise RpcError(errors.AUTH_REQUIRED, "Authentication required", NO_MODEL_MESSAGE)
        await self.lifecycle.before_prompt(session)  # MCP servers still connecting
        parts = await read_resource_links(parts_from_prompt(prompt.prompt), session.policy.sandbox)
        ticket = agent.followup(parts)

        # `$/cancel_request` for this prompt stops it alone: dropped if queued, aborted (queue
        # kept) if running. Admitted only now, so a cancel on the next line finds it queued.
        def stop_this_prompt() -> None:
            if not ticket.withdraw() and ticket.state == "running":
                agent.cancel(UserCancel(), keep_inbox=True)

        request.on_cancel_request = stop_this_prompt
        request.admit()
        await self.lifecycle.announce_title(session, text)
        result = await ticket.wait()
        usage = agent.last_usage
        if usage is not None and usage.context_window:
            from protocol.session_update import UsageUpdate

            from .updates import SessionUpdates

            await SessionUpdates(self.peer, session.id).send(
                UsageUpdate(
                    used=usage.input_tokens + usage.output_tokens, size=usage.context_window
                )
            )
        return PromptResponse(stop_reason=stop_reason_for(result))

    async def _run_command(self, session: AcpSession, name: str, argument: str) -> PromptResponse:
        """A slash command (see `modes.COMMANDS`): handled here, the model is not asked."""
        from acp_server.session.records import utc_now

        from .updates import SessionUpdates

        assert name == "mode"
        try:
            await self.lifecycle.change_mode(session, argument)
            message = f"Mode set to {argument}."
        except RpcError as exc:
            message = f"The mode was not changed: {exc.data}"
        ids = self.options.ids
        message_id = ids("cmd") if ids is not None else f"cmd_{utc_now()}"
        await SessionUpdates(self.peer, session.id).send(
            AgentMessageChunk(content=TextContent(text=message), message_id=message_id)
        )
        return PromptResponse(stop_reason="end_turn")

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
