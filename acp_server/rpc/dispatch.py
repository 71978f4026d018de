"""One run path: every incoming call, by method name, to its typed handler.

The bridge hands the router a `RouteTable`: the rows of its protocol version's method table
(acp_protocol/methods.py) that it serves, each with the handler that takes the row's params
type. For a request the router asks the connection's gate, finds the route (an unknown method:
-32601), decodes the params once with the row's type (a mismatch: -32602 with msgspec's field
path), runs the handler and builds the response frame; every error leaves through the one
redacting exit (`error_frame`, rpc/error_exit.py). A notification is decoded and handled the
same way and never answered: a malformed or unknown one is ignored, as ACP asks.

A table may serve some of its rows later: the bridge's handlers that need the runtime are
imported after the first `session/new` answer. A request for a row with no route yet waits for
the table's `load`, which installs the table that routes it. Which rows a connection serves, and
when, is the bridge's business; the run path is the same for every request. See
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import msgspec

from acp_protocol import errors
from acp_protocol.jsonrpc import JSONRPC_VERSION, ResultResponse
from acp_protocol.methods import MethodSpec

from .error_exit import ErrorResponse, error_frame
from .handlers import RequestGate, RpcError
from .peer import IncomingRequest

log = logging.getLogger(__name__)

P = TypeVar("P")


@dataclass(frozen=True)
class Route(Generic[P]):
    """A request method: its row of the method table, and the handler that takes its params."""

    method: MethodSpec[P]
    handler: Callable[[IncomingRequest, P], Awaitable[Any]]


@dataclass(frozen=True)
class NotificationRoute(Generic[P]):
    """A notification method: its row of the method table, and its handler."""

    method: MethodSpec[P]
    handler: Callable[[P], Awaitable[None]]


@dataclass(frozen=True)
class RouteTable:
    """The routes of incoming calls, by method name; a request not here answers -32601, a
    notification not here is ignored (as ACP asks). Build it with `RouteTable.of`."""

    methods: Mapping[str, MethodSpec[Any]] = field(default_factory=dict)
    """The method table of the protocol version served: every route is one of its rows."""
    requests: Mapping[str, Route[Any]] = field(default_factory=dict)
    notifications: Mapping[str, NotificationRoute[Any]] = field(default_factory=dict)
    gate: RequestGate | None = None
    """The connection's ordering rule (ACP: `initialize` first), applied to every request,
    known method or not, before it is routed."""
    load: Callable[[], Awaitable[None]] | None = None
    """Installs the table of the routes served later (or raises `RpcError`); awaited by a
    request for an agent-side request row of `methods` that has no route yet."""

    @classmethod
    def of(
        cls,
        methods: Mapping[str, MethodSpec[Any]],
        routes: Iterable[Route[Any] | NotificationRoute[Any]],
        *,
        gate: RequestGate | None = None,
        load: Callable[[], Awaitable[None]] | None = None,
    ) -> RouteTable:
        """A table of `routes`, each checked to be a row of `methods` that the agent handles,
        routed once, as the request or notification its row is."""
        requests: dict[str, Route[Any]] = {}
        notifications: dict[str, NotificationRoute[Any]] = {}
        for route in routes:
            row = route.method
            if methods.get(row.name) is not row:
                raise ValueError(f"{row.name} is not a row of this method table")
            if row.direction != "agent":
                raise ValueError(f"{row.name} is handled by the {row.direction}, not the agent")
            if isinstance(route, NotificationRoute) != row.is_notification:
                kind = "notification" if row.is_notification else "request"
                raise ValueError(f"{row.name} is a {kind}: route it as one")
            if row.name in requests or row.name in notifications:
                raise ValueError(f"{row.name} is routed twice")
            if isinstance(route, NotificationRoute):
                notifications[row.name] = route
            else:
                requests[row.name] = route
        return cls(methods, requests, notifications, gate, load)

    def routes_later(self, method: str) -> bool:
        """Whether a request for `method` waits for `load`: an agent-side request of the
        method table that has no route yet."""
        row = self.methods.get(method)
        return (
            self.load is not None
            and method not in self.requests
            and row is not None
            and row.direction == "agent"
            and not row.is_notification
        )


def decode_params(params: msgspec.Raw | None, params_type: type[P]) -> P:
    """Decode a method's params, turning a mismatch into -32602 with msgspec's field path."""
    try:
        return msgspec.json.decode(params if params is not None else b"null", type=params_type)
    except msgspec.ValidationError as exc:
        raise RpcError(errors.INVALID_PARAMS, "Invalid params", str(exc)) from None
    except msgspec.DecodeError as exc:  # unreachable for envelope-checked params; kept exact
        raise RpcError(errors.INVALID_PARAMS, "Invalid params", str(exc)) from None


class Router:
    """The peer's dispatcher: routes by the installed `RouteTable`."""

    def __init__(self) -> None:
        self._table = RouteTable()

    def install(self, table: RouteTable) -> None:
        """Route calls by `table` from now on."""
        self._table = table

    async def dispatch_request(self, request: IncomingRequest) -> ResultResponse | ErrorResponse:
        try:
            result = await self._run(request)
        except RpcError as exc:
            return error_frame(request.id, exc.code, exc.message, exc.data)
        return ResultResponse(JSONRPC_VERSION, request.id, result)

    async def _run(self, request: IncomingRequest) -> Any:
        """The request's result; `RpcError` for its error answer. Cancellation propagates;
        any other exception is answered -32603 without its text (logged, redacted, on
        stderr)."""
        table = self._table
        refusal = table.gate(request.method) if table.gate is not None else None
        if refusal is not None:
            raise refusal
        if table.routes_later(request.method):
            assert table.load is not None
            await table.load()
            table = self._table
        route = table.requests.get(request.method)
        if route is None:
            raise RpcError(errors.METHOD_NOT_FOUND, "Method not found", request.method)
        params = decode_params(request.params, route.method.params)
        try:
            return await route.handler(request, params)
        except RpcError:
            raise
        except Exception:
            log.exception("handler for %s failed", request.method)
            raise RpcError(errors.INTERNAL_ERROR, "Internal error") from None

    async def dispatch_notification(self, method: str, params: msgspec.Raw | None) -> None:
        route = self._table.notifications.get(method)
        if route is None:
            return  # unknown notifications are ignored, as ACP asks
        try:
            decoded = decode_params(params, route.method.params)
        except RpcError as exc:
            log.warning("ignoring a malformed %s: %s", method, exc.data)
            return
        try:
            await route.handler(decoded)
        except Exception:
            log.exception("notification %s failed", method)
