"""One client connection: the handshake, authentication and the session registry.

Capabilities advertised in `initialize` are exactly what works in this build; each later
feature adds its own flag when it lands.
"""

from __future__ import annotations

import logging
import os

import anyio
import msgspec

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
from protocol.session import NewSessionRequest, NewSessionResponse

from .sessions import AcpSession, SessionRegistry

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
"""The only ACP version we speak; a client asking for another gets this one (spec rule)."""

AGENT_INFO = Implementation(name="acp-server", title="acp-server", version=__version__)


class AcpConnection:
    """ACP state of one client: its capabilities, its sessions."""

    def __init__(self, peer: Peer) -> None:
        self.peer = peer
        self.client_capabilities = ClientCapabilities()
        self.auth_methods: list[AuthMethod] = []
        self.sessions = SessionRegistry()
        self._initialized = anyio.Event()
        self._dispatcher: JsonRpcDispatcher | None = None

    def register(self, dispatcher: JsonRpcDispatcher) -> None:
        """Install this connection's handlers."""
        self._dispatcher = dispatcher
        dispatcher.request("initialize", self.initialize)
        dispatcher.request("authenticate", self.authenticate)
        dispatcher.request("session/new", self.new_session)

    async def preload_when_initialized(self) -> None:
        """Load the dispatcher after the handshake answer is out, so it never delays it."""
        await self._initialized.wait()
        await self.peer.writer.drained()
        if self._dispatcher is not None:
            await self._dispatcher.load()

    async def dispose(self) -> None:
        """Release every session (later: end their turns as `disposed`, flush journals)."""
        self.sessions.clear()

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
        session = self.sessions.create(
            cwd=new.cwd, additional_directories=list(extra_roots), mcp_servers=new.mcp_servers
        )
        log.info("session %s created in %s", session.id, session.cwd)
        return NewSessionResponse(session_id=session.id)


def require_absolute(field: str, path: str) -> None:
    """ACP paths are absolute; a relative one is a client bug answered with -32602."""
    if not os.path.isabs(path):
        raise RpcError(
            errors.INVALID_PARAMS, "Invalid params", f"{field} must be an absolute path: {path!r}"
        )


__all__ = ["AcpConnection", "AcpSession"]
