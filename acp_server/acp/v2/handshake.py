"""Choosing the wire version, and v2's handshake: the `initialize` answer, `auth/login`,
`auth/logout`, and the rule for a repeated `initialize`.

The connection's first successful `initialize` picks its version for good: the highest this
agent speaks at or below the one asked for (1 or 2), as the v2 schema says; a version below 1 is
refused with -32022 and the versions spoken, a value that is not a uint16 with -32602, and the
connection stays uninitialized (the client may ask again). The v2 pages say "the latest
supported" instead of refusing; the schema and its SDK refuse, and so do we (the v2 RFC).

A v2 client is heard in v1's terms by the code both wires share (`client_capabilities`): no
client file system or terminals (v2 has none: tools read, write and run through our own
runtime), its terminal-auth and form-elicitation markers. On a v2 connection a repeated
`initialize` is answered again only while no other request was sent, and only for version 2 or
later (the SDK's rule); a failed repeat keeps the first answer's state.

Light: answered before the runtime is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import msgspec

from acp_protocol import errors
from acp_protocol.initialize import AuthCapabilities, AuthMethod, ClientCapabilities, Implementation
from acp_protocol.newer import NewerClientCapabilities
from acp_protocol.system_prompt import (
    SessionSystemPromptCapabilities,
    SessionSystemPromptModeCapabilities,
    SessionSystemPromptOverrideCapabilities,
)
from acp_protocol.unstable import SessionForkCapabilities
from acp_protocol.v2 import initialize as i
from acp_protocol.v2.methods import V2
from acp_protocol.v2.unstable import ForkingSessionCapabilities
from acp_server.rpc.dispatch import Route
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest

from ..context import BridgeContext
from ..errors import invalid_params
from ..logout import log_out
from .presenter import V2Presenter


class Handshake(Protocol):
    """What v2's handshake shares with the connection's (acp/methods/handshake.py)."""

    auth_methods: list[AuthMethod]
    agent_info: Implementation
    requests_since_initialize: int

    def chose(self, version: int, capabilities: ClientCapabilities) -> None:
        """The connection speaks `version` from now on, to a client with `capabilities`."""

    def check_login(self, method_id: str) -> None:
        """The login's method is one advertised, and a model is there to log in to."""


__all__ = [
    "AGENT_CAPABILITIES",
    "SUPPORTED_VERSIONS",
    "V2Handshake",
    "as_v1_capabilities",
    "auth_methods_v2",
    "negotiated",
]

SUPPORTED_VERSIONS = (1, 2)
"""The ACP versions this agent speaks, one per connection."""

AGENT_CAPABILITIES = i.AgentCapabilities(
    session=ForkingSessionCapabilities(
        # Images go to models that take them; embedded resources become context text.
        prompt=i.PromptCapabilities(
            image=i.PromptImageCapabilities(),
            embedded_context=i.PromptEmbeddedContextCapabilities(),
        ),
        mcp=i.McpCapabilities(stdio=i.McpStdioCapabilities(), http=i.McpHttpCapabilities()),
        delete=i.SessionDeleteCapabilities(),
        additional_directories=i.SessionAdditionalDirectoriesCapabilities(),
        # Unstable markers, as v1 advertises their counterparts: acp/system_prompt.py, fork.
        fork=SessionForkCapabilities(),
        system_prompt=SessionSystemPromptCapabilities(
            mode=SessionSystemPromptModeCapabilities(
                override=SessionSystemPromptOverrideCapabilities()
            )
        ),
    )
)
"""Exactly what works in this build, on v2 (`list`, `resume`, `close` are v2's baseline)."""


def negotiated(requested: int) -> int:
    """The version a connection asking for `requested` speaks; -32602 for a value that is not
    a uint16, -32022 for one below every version spoken."""
    if not 0 <= requested <= 65535:
        raise invalid_params(f"protocolVersion must be a uint16 (0 to 65535), not {requested}")
    if requested < SUPPORTED_VERSIONS[0]:
        raise RpcError(
            errors.UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"requested": requested, "supported": list(SUPPORTED_VERSIONS)},
        )
    return min(requested, SUPPORTED_VERSIONS[-1])


def as_v1_capabilities(capabilities: i.ClientCapabilities) -> NewerClientCapabilities:
    """What a v2 client supports, in the v1 terms the shared code reads."""
    auth = capabilities.auth
    terminal = isinstance(auth, i.ClientAuthCapabilities) and isinstance(
        auth.terminal, i.TerminalAuthCapabilities
    )
    return NewerClientCapabilities(
        auth=AuthCapabilities(terminal=terminal),
        elicitation=capabilities.elicitation,
        meta=capabilities.meta,
    )


def auth_methods_v2(methods: list[AuthMethod]) -> list[i.AuthMethod]:
    """v1's auth methods in v2's shape (`methodId`, a `type` on each)."""
    return [
        i.AuthMethodTerminal(method_id=m.id, name=m.name, description=m.description, args=m.args)
        if m.type == "terminal"
        else i.AuthMethodAgent(method_id=m.id, name=m.name, description=m.description)
        for m in methods
    ]


def decode_initialize(request: IncomingRequest, version: int) -> i.InitializeRequest:
    """A v2 `initialize`'s params: exactly v2's at version 2 (`info` required); above it, a
    missing or bad `info` is read as unknown (a newer client's initialize is parsed leniently,
    as the SDK's router does)."""
    raw = request.params if request.params is not None else b"null"
    try:
        return msgspec.json.decode(raw, type=i.InitializeRequest)
    except msgspec.ValidationError as exc:
        if version == 2:
            raise invalid_params(str(exc)) from None
    value = msgspec.json.decode(raw)
    if isinstance(value, dict):
        value["info"] = {"name": "unknown", "version": "unknown"}
    try:
        return msgspec.convert(value, type=i.InitializeRequest)
    except msgspec.ValidationError as exc:
        raise invalid_params(str(exc)) from None


class V2Handshake:
    """A v2 connection's handshake; `chosen` installs the v2 route table (the connection's)."""

    def __init__(
        self, context: BridgeContext, handshake: Handshake, chosen: Callable[[], None]
    ) -> None:
        self._context = context
        self._handshake = handshake
        self._chosen = chosen
        self._answer: i.InitializeResponse | None = None

    def routes(self) -> list[Route[Any]]:
        """This group's methods (a v2 connection's handshake)."""
        return [
            Route(V2.initialize, self.initialize),
            Route(V2.auth_login, self.login),
            Route(V2.auth_logout, self.logout),
        ]

    async def choose(self, request: IncomingRequest, version: int) -> i.InitializeResponse:
        """The first `initialize` asked for v2 (or later): from now on this connection speaks
        v2 (the route table is installed before the answer is written, so no later line is
        routed as v1)."""
        init = decode_initialize(request, version)
        context = self._context
        context.client_capabilities = as_v1_capabilities(init.capabilities)
        context.presenter = V2Presenter(context)
        context.peer.null_request_ids = False  # v2's ids are strings or integers
        context.peer.batches = True  # v2 follows JSON-RPC 2.0's batch rules
        self._handshake.chose(2, context.client_capabilities)
        self._answer = i.InitializeResponse(
            protocol_version=2,
            info=self._handshake.agent_info,
            capabilities=AGENT_CAPABILITIES,
            auth_methods=auth_methods_v2(self._handshake.auth_methods),
        )
        self._chosen()
        return self._answer

    async def initialize(
        self, request: IncomingRequest, init: i.InitializeRequest
    ) -> i.InitializeResponse:
        """A repeated `initialize` on a v2 connection: the first answer again, while no other
        request has been sent; -32600 otherwise (the first one's state stands)."""
        assert self._answer is not None
        if self._handshake.requests_since_initialize:
            raise RpcError(
                errors.INVALID_REQUEST,
                "Invalid request",
                "ACP v2: initialize must not be repeated after other requests",
            )
        if init.protocol_version < 2:
            raise RpcError(
                errors.INVALID_REQUEST,
                "Invalid request",
                "this connection speaks ACP v2: a repeated initialize must ask for version 2 "
                "or later",
            )
        return self._answer

    async def login(
        self, request: IncomingRequest, login: i.LoginAuthRequest
    ) -> i.LoginAuthResponse:
        """`auth/login`: v1's `authenticate` (the method must be one advertised; without a
        model, or after a logout, the how-to)."""
        self._handshake.check_login(login.method_id)
        return i.LoginAuthResponse()

    async def logout(
        self, request: IncomingRequest, logout: i.LogoutAuthRequest
    ) -> i.LogoutAuthResponse:
        """`auth/logout`: forget the stored keys (acp/logout.py)."""
        return i.LogoutAuthResponse(meta=await log_out(self._context))
