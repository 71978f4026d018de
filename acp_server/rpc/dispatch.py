"""One dispatch path: every incoming call, by method name, to its typed handler.

The bridge hands the router a `RouteTable`: for each method name (the constants of
`acp_protocol/methods.py`) the type its params decode into and the handler that takes them. The
router asks the connection's gate, finds the route (an unknown method: -32601), decodes the
params once (a mismatch: -32602 with msgspec's field path), runs the handler, and builds the
response frame; every error, the engine's included, leaves through the one redacting exit
(`error_frame`, rpc/error_exit.py).

jsonrpcserver runs the handlers as a private engine (rpc/engine.py), except for the table's
`early` methods: those a client waits for before its user can type (`initialize`,
`authenticate`, `session/new`) are run by the router itself, so the engine's import stays off
the path to ready; it is loaded in a worker thread afterwards. Notifications are never answered,
so the engine has nothing to give them: the router runs their handlers directly (the
`session/cancel` path does no more work than it must). See
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeAlias, TypeVar

import msgspec

from acp_protocol import errors
from acp_protocol.jsonrpc import JSONRPC_VERSION, ResultResponse

from .engine import Engine
from .error_exit import ErrorResponse, error_frame
from .handlers import RequestGate, RpcError
from .peer import IncomingRequest

log = logging.getLogger(__name__)

P = TypeVar("P")

Outcome: TypeAlias = tuple[bool, Any]
"""(True, result) or (False, RpcError): what running a handler gave."""


@dataclass(frozen=True)
class Route(Generic[P]):
    """A request method: the type its params decode into, and its handler."""

    params: type[P]
    handler: Callable[[IncomingRequest, P], Awaitable[Any]]


@dataclass(frozen=True)
class NotificationRoute(Generic[P]):
    """A notification method: the type its params decode into, and its handler."""

    params: type[P]
    handler: Callable[[P], Awaitable[None]]


@dataclass(frozen=True)
class RouteTable:
    """The routes of incoming calls, by method name; a request not here answers -32601, a
    notification not here is ignored (as ACP asks)."""

    requests: Mapping[str, Route[Any]] = field(default_factory=dict)
    notifications: Mapping[str, NotificationRoute[Any]] = field(default_factory=dict)
    gate: RequestGate | None = None
    """The connection's ordering rule (ACP: `initialize` first), applied to every request,
    known method or not, before it is routed."""
    early: frozenset[str] = frozenset()
    """Methods the router runs itself, without waiting for the engine's import: those a
    client waits for before its user can type (the handshake and `session/new`)."""


def decode_params(params: msgspec.Raw | None, params_type: type[P]) -> P:
    """Decode a method's params, turning a mismatch into -32602 with msgspec's field path."""
    try:
        return msgspec.json.decode(params if params is not None else b"null", type=params_type)
    except msgspec.ValidationError as exc:
        raise RpcError(errors.INVALID_PARAMS, "Invalid params", str(exc)) from None
    except msgspec.DecodeError as exc:  # unreachable for envelope-checked params; kept exact
        raise RpcError(errors.INVALID_PARAMS, "Invalid params", str(exc)) from None


async def invoke(route: Route[P], request: IncomingRequest, params: P) -> Outcome:
    """Run a route's handler; (True, result) or (False, RpcError). Cancellation propagates;
    any other exception is answered -32603 without its text (logged, redacted, on stderr)."""
    try:
        return True, await route.handler(request, params)
    except RpcError as exc:
        return False, exc
    except Exception:
        log.exception("handler for %s failed", request.method)
        return False, RpcError(errors.INTERNAL_ERROR, "Internal error")


class Router:
    """The peer's dispatcher: routes by the installed `RouteTable`."""

    def __init__(self) -> None:
        self._table = RouteTable()
        self._engine = Engine(invoke)

    def install(self, table: RouteTable) -> None:
        """Route calls by `table` from now on (before the first call is read)."""
        self._table = table

    async def load(self) -> None:
        """Load the engine (once, in a worker thread: the event loop keeps serving)."""
        await self._engine.load(self._table.requests)

    async def dispatch_request(self, request: IncomingRequest) -> ResultResponse | ErrorResponse:
        ok, value = await self._run(request)
        if ok:
            return ResultResponse(JSONRPC_VERSION, request.id, value)
        return error_frame(request.id, value.code, value.message, value.data)

    async def _run(self, request: IncomingRequest) -> Outcome:
        table = self._table
        refusal = table.gate(request.method) if table.gate is not None else None
        if refusal is not None:
            return False, refusal
        route = table.requests.get(request.method)
        if route is None:
            return False, RpcError(errors.METHOD_NOT_FOUND, "Method not found", request.method)
        try:
            params = decode_params(request.params, route.params)
        except RpcError as exc:
            return False, exc
        if request.method in table.early:
            return await invoke(route, request, params)
        if not self._engine.loaded:  # the lock costs an event-loop pass per call otherwise
            await self.load()
        return await self._engine.call(request, params)

    async def dispatch_notification(self, method: str, params: msgspec.Raw | None) -> None:
        route = self._table.notifications.get(method)
        if route is None:
            return  # unknown notifications are ignored, as ACP asks
        try:
            decoded = decode_params(params, route.params)
        except RpcError as exc:
            log.warning("ignoring a malformed %s: %s", method, exc.data)
            return
        try:
            await route.handler(decoded)
        except Exception:
            log.exception("notification %s failed", method)
