"""`initialize` and `authenticate`: what this build can do, and how to configure a model.

Capabilities advertised in `initialize` are exactly what works in this build; each later
feature adds its own flag when it lands. Answered before anything of the runtime is imported.

Auth methods (docs/rfc/implemented/feature/2026-12-01-first-run-setup.md): every `initialize`
lists one, model or not, because the ACP registry lists only agents with an `agent` or
`terminal` method. A client that can run terminal auth (`clientCapabilities.auth.terminal`, or
the registry client's `_meta` flag `terminal-auth`) gets the `terminal` method running
`acp-server setup`; any other client gets the `agent` method, whose `authenticate` succeeds when a
model is configured and otherwise answers the how-to.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from acp_protocol import errors
from acp_protocol.initialize import (
    AgentAuthCapabilities,
    AgentCapabilities,
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethod,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LogoutCapabilities,
    LogoutRequest,
    LogoutResponse,
    McpCapabilities,
    PromptCapabilities,
    SessionAdditionalDirectoriesCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
)
from acp_protocol.methods import INITIALIZE, V1
from acp_protocol.newer import NewerInitializeRequest
from acp_protocol.system_prompt import (
    SessionSystemPromptCapabilities,
    SessionSystemPromptModeCapabilities,
    SessionSystemPromptOverrideCapabilities,
)
from acp_protocol.unstable import ForkingSessionCapabilities, SessionForkCapabilities
from acp_protocol.v2.initialize import InitializeResponse as V2InitializeResponse
from acp_server import __version__
from acp_server.rpc.dispatch import Route
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest

from ..context import BridgeContext
from ..errors import invalid_params, no_model, no_model_message
from ..logout import log_out
from ..v2.handshake import V2Handshake, negotiated

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
"""ACP v1, spoken to a client that asks for it (v2: acp/v2/handshake.py picks the version)."""

AGENT_INFO = Implementation(name="acp-server", title="acp-server", version=__version__)

AGENT_CAPABILITIES = AgentCapabilities(
    load_session=True,
    # Images go to models that take them; embedded resources become context text.
    prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
    # stdio, streamable HTTP and SSE MCP servers are each tested against a real server.
    mcp_capabilities=McpCapabilities(http=True, sse=True),
    session_capabilities=ForkingSessionCapabilities(
        list=SessionListCapabilities(),
        resume=SessionResumeCapabilities(),
        close=SessionCloseCapabilities(),
        delete=SessionDeleteCapabilities(),
        # Extra roots on new, load, resume and fork (explicit on each; session/list names them).
        additional_directories=SessionAdditionalDirectoriesCapabilities(),
        fork=SessionForkCapabilities(),
        # `append` and `override`: acp_server/acp/system_prompt.py.
        system_prompt=SessionSystemPromptCapabilities(
            mode=SessionSystemPromptModeCapabilities(
                override=SessionSystemPromptOverrideCapabilities()
            )
        ),
    ),
    auth=AgentAuthCapabilities(logout=LogoutCapabilities()),  # acp/logout.py
)
"""Exactly what works in this build (v1; v2's: acp/v2/handshake.py)."""

CONFIGURE_MODEL = "configure-model"
"""The `agent` auth method: `authenticate` checks that a model is configured."""
SETUP = "setup"
"""The `terminal` auth method: the client runs `acp-server setup` in a terminal."""
SETUP_ARGS = ["setup"]
"""Appended to the agent's configured command (the schema's reading) or given to the binary
alone (the registry's): `acp-server [options] setup` and `acp-server setup` both run setup."""
TERMINAL_AUTH_META_FLAG = "terminal-auth"
"""The `clientCapabilities._meta` flag the ACP registry's checking client sends."""

CONFIGURED_MESSAGE = "A model is configured; run `acp-server setup` in a terminal to change it."


def wants_terminal_auth(capabilities: ClientCapabilities) -> bool:
    """The client can run a `terminal` auth method: the stable capability or the registry's
    `_meta` flag."""
    meta = capabilities.meta
    return capabilities.auth.terminal or (
        isinstance(meta, dict) and bool(meta.get(TERMINAL_AUTH_META_FLAG))
    )


def auth_methods(
    capabilities: ClientCapabilities, *, model_configured: bool, config_path: Path | None = None
) -> list[AuthMethod]:
    """The one auth method `initialize` lists for this client (`config_path`: the config file
    the no-model how-to names)."""
    description = CONFIGURED_MESSAGE if model_configured else no_model_message(config_path)
    if wants_terminal_auth(capabilities):
        return [
            AuthMethod(
                id=SETUP,
                name="Set up a model",
                type="terminal",
                description=description,
                args=list(SETUP_ARGS),
            )
        ]
    return [AuthMethod(id=CONFIGURE_MODEL, name="Configure a model", description=description)]


NOT_INITIALIZED_MESSAGE = (
    "Connection not initialized: the client must call initialize before any other method"
)
"""The message of a request that comes before `initialize` (clients show the message)."""


class Handshake:
    """The connection-level methods: the version choice, v1's answers, authentication; the
    client's capabilities go into the context."""

    def __init__(self, context: BridgeContext, on_v2: Callable[[], None] = lambda: None) -> None:
        """`on_v2`: installs the v2 route table (the connection's), when a client asks for v2."""
        self._context = context
        self.initialized = anyio.Event()
        self.version: int | None = None
        """The connection's ACP version, once its first `initialize` succeeded."""
        self.requests_since_initialize = 0
        self._model_configured = context.options.model is not None
        # Replaced by what `initialize` lists for the client's capabilities.
        self.auth_methods: list[AuthMethod] = auth_methods(
            ClientCapabilities(),
            model_configured=self._model_configured,
            config_path=context.options.config_path,
        )
        self.agent_info = AGENT_INFO
        self.v2 = V2Handshake(context, self, on_v2)

    def routes(self) -> list[Route[Any]]:
        """This group's methods."""
        return [
            Route(V1.initialize, self.initialize),
            Route(V1.authenticate, self.authenticate),
            Route(V1.logout, self.logout),
        ]

    def check_order(self, method: str) -> RpcError | None:
        """The connection's ordering rule, asked before every request is routed: nothing but
        `initialize` until `initialize` has been answered (ACP: "Before a Session can be
        created, Clients MUST initialize the connection")."""
        if method == INITIALIZE or self.initialized.is_set():
            if method != INITIALIZE:
                self.requests_since_initialize += 1  # a v2 initialize is not repeated after
            return None
        return RpcError(
            errors.INVALID_REQUEST,
            NOT_INITIALIZED_MESSAGE,
            f"{method!r} arrived before initialize; send initialize first",
        )

    def chose(self, version: int, capabilities: ClientCapabilities) -> None:
        """The connection speaks `version` from now on, to a client that supports
        `capabilities`."""
        self.version = version
        self._context.client_capabilities = capabilities
        self.auth_methods = auth_methods(
            capabilities,
            model_configured=self._model_configured,
            config_path=self._context.options.config_path,
        )
        self.initialized.set()

    async def initialize(
        self, request: IncomingRequest, init: NewerInitializeRequest
    ) -> InitializeResponse | V2InitializeResponse:
        if self.version is None:
            version = negotiated(init.protocol_version)  # -32602, -32022: still uninitialized
            if version == 2:
                return await self.v2.choose(request, init.protocol_version)
            self.chose(PROTOCOL_VERSION, init.client_capabilities)
        else:
            # Capabilities are negotiated once per connection: sessions already wired with
            # the first answer's client capabilities keep them, and so does everything after.
            log.info("initialize repeated: answered as before; the first capabilities stand")
        if init.protocol_version != PROTOCOL_VERSION:
            log.info(
                "client asked for protocol %d; answering %d",
                init.protocol_version,
                PROTOCOL_VERSION,
            )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AGENT_CAPABILITIES,
            auth_methods=self.auth_methods,
            agent_info=AGENT_INFO,
        )

    def check_login(self, method_id: str) -> None:
        """`authenticate` (v1) and `auth/login` (v2): the method must be one advertised; without
        a model, or after a logout, the answer is how to configure one."""
        known = [method.id for method in self.auth_methods]
        if method_id not in known:
            raise invalid_params(
                f"unknown authentication method {method_id!r}; advertised: {known}"
            )
        # Without a model nothing can answer a prompt: the same how-to prompts answer.
        if not self._model_configured or self._context.logged_out:
            raise no_model(self._context.options.config_path)

    async def authenticate(
        self, request: IncomingRequest, auth: AuthenticateRequest
    ) -> AuthenticateResponse:
        self.check_login(auth.method_id)
        return AuthenticateResponse()

    async def logout(self, request: IncomingRequest, logout: LogoutRequest) -> LogoutResponse:
        """v1's `logout`: forget the stored keys (acp/logout.py)."""
        return LogoutResponse(meta=await log_out(self._context))
