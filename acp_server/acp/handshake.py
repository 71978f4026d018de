"""`initialize` and `authenticate`: what this build can do, and how to configure a model.

Capabilities advertised in `initialize` are exactly what works in this build; each later
feature adds its own flag when it lands. Answered before anything of the runtime is imported.
"""

from __future__ import annotations

import logging

import anyio
import msgspec

from acp_protocol import errors
from acp_protocol.initialize import (
    AgentCapabilities,
    AuthenticateRequest,
    AuthenticateResponse,
    AuthMethod,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    McpCapabilities,
    PromptCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
)
from acp_protocol.methods import INITIALIZE
from acp_protocol.unstable import ForkingSessionCapabilities, SessionForkCapabilities
from acp_server import __version__
from acp_server.rpc.handlers import RpcError, decode_params
from acp_server.rpc.peer import IncomingRequest

from .context import BridgeContext

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
"""The only ACP version we speak; a client asking for another gets this one (spec rule)."""

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
        fork=SessionForkCapabilities(),
    ),
)
"""Exactly what works in this build."""

CONFIGURE_MODEL = "configure-model"

NO_MODEL_MESSAGE = (
    "No model is configured. Add --model SPEC to the agent's args, or ACP_SERVER_MODEL=SPEC to "
    "its env, in your client's agent settings (or default_model in "
    "~/.config/acp-server/config.toml). SPEC is openai:MODEL with the key in OPENAI_API_KEY "
    "(OPENAI_BASE_URL=http://127.0.0.1:8080/v1 for a local llama.cpp server), "
    "anthropic:MODEL with the key in ANTHROPIC_API_KEY, or echo to try the protocol. "
    "See docs/editors.md."
)
"""Said where users look: the prompt error's `message` (clients show it, not `data`) and the
auth method's description."""


NOT_INITIALIZED_MESSAGE = (
    "Connection not initialized: the client must call initialize before any other method"
)
"""The message of a request that comes before `initialize` (clients show the message)."""


class Handshake:
    """The connection-level methods; remembers the client's capabilities in the context."""

    def __init__(self, context: BridgeContext) -> None:
        self._context = context
        self.initialized = anyio.Event()
        # Without a model nothing can answer a prompt; the auth method tells clients how to
        # configure one (prompts answer -32000 with the same message).
        self.auth_methods: list[AuthMethod] = (
            []
            if context.options.model is not None
            else [
                AuthMethod(
                    id=CONFIGURE_MODEL, name="Configure a model", description=NO_MODEL_MESSAGE
                )
            ]
        )

    def check_order(self, method: str) -> RpcError | None:
        """The connection's ordering rule, asked before every request is routed: nothing but
        `initialize` until `initialize` has been answered (ACP: "Before a Session can be
        created, Clients MUST initialize the connection")."""
        if method == INITIALIZE or self.initialized.is_set():
            return None
        return RpcError(
            errors.INVALID_REQUEST,
            NOT_INITIALIZED_MESSAGE,
            f"{method!r} arrived before initialize; send initialize first",
        )

    async def initialize(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> InitializeResponse:
        init = decode_params(params, InitializeRequest)
        if self.initialized.is_set():
            # Capabilities are negotiated once per connection: sessions already wired with
            # the first answer's client capabilities keep them, and so does everything after.
            log.info("initialize repeated: answered as before; the first capabilities stand")
        else:
            self._context.client_capabilities = init.client_capabilities
        if init.protocol_version != PROTOCOL_VERSION:
            log.info(
                "client asked for protocol %d; answering %d",
                init.protocol_version,
                PROTOCOL_VERSION,
            )
        self.initialized.set()
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
