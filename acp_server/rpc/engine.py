"""The router's private engine (rpc/dispatch.py): jsonrpcserver, whose dispatch core
rpc/jsonrpcserver_core.py loads; no other module calls it.

The router has already checked the envelope, found the route and decoded the params; the engine
gets a decoded request dict with jsonrpcserver's own deserializing and validation off, looks the
method up in its registry, binds the arguments (the request as context, the decoded params as
the one positional argument) and runs the handler through the router's `invoke`. What it answers
(its `Success`, or its `Error`, whether the handler's or its own) goes back to the router as an
outcome, and every error leaves through the router's one redacting exit; nothing here writes a
frame. jsonrpcserver's dispatch core is loaded without its package `__init__`
(rpc/jsonrpcserver_core.py); importing it is a measured cost (figures in
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md), paid in a worker thread after
the first `session/new` answer (see
docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from msgspec import UNSET

from acp_protocol.jsonrpc import JSONRPC_VERSION

from . import jsonrpcserver_core
from .handlers import RpcError
from .peer import IncomingRequest

if TYPE_CHECKING:
    from .dispatch import Outcome, Route

Invoke = Callable[["Route[Any]", IncomingRequest, Any], Awaitable["Outcome"]]


def _load_jsonrpcserver() -> Any:
    # 5.0.9 calls importlib.resources.read_text (-> open_text) at import, deprecated on 3.11
    # and 3.12 only.
    warnings.filterwarnings("ignore", r"(read_text|open_text) is deprecated", DeprecationWarning)
    # Its dispatch core only: no jsonschema validator we would switch off, no HTTP server.
    core = jsonrpcserver_core.load()
    from oslash.either import Left  # jsonrpcserver's answers are oslash `Either`s

    return core, Left, core.NODATA


class Engine:
    """jsonrpcserver behind the router: loaded once, then runs every non-early request."""

    def __init__(self, invoke: Invoke) -> None:
        self._invoke = invoke
        self._jrs: Any = None
        self._left: type[Any] = type(None)
        self._nodata: Any = None
        self._methods: dict[str, Callable[..., Awaitable[Any]]] = {}
        self._loading = anyio.Lock()

    @property
    def loaded(self) -> bool:
        return self._jrs is not None

    async def load(self, routes: Mapping[str, Route[Any]]) -> None:
        """Import jsonrpcserver (once, in a worker thread: the event loop keeps serving) and
        register a method for each route."""
        async with self._loading:
            if self._jrs is not None:
                return
            jrs, left, nodata = await anyio.to_thread.run_sync(_load_jsonrpcserver)
            for name, route in routes.items():
                self._methods[name] = self._method(jrs, route)
            self._left, self._nodata = left, nodata
            self._jrs = jrs

    async def call(self, request: IncomingRequest, params: Any) -> Outcome:
        """Run `request` (its params decoded) through jsonrpcserver; its answer as an outcome."""
        response = await self._jrs.async_dispatch_to_response(
            {
                "jsonrpc": JSONRPC_VERSION,
                "method": request.method,
                "params": [params],
                "id": request.id,
            },
            self._methods,
            context=request,
            deserializer=_identity,
            validator=_no_validation,
        )
        if isinstance(response, self._left):
            error = response._error
            data = UNSET if error.data is self._nodata else error.data
            return False, RpcError(error.code, error.message, data)
        return True, response._value.result

    def _method(self, jrs: Any, route: Route[Any]) -> Callable[..., Awaitable[Any]]:
        invoke = self._invoke

        async def method(request: IncomingRequest, params: Any) -> Any:
            ok, value = await invoke(route, request, params)
            if ok:
                return jrs.Success(value)
            if value.data is UNSET:
                return jrs.Error(value.code, value.message)
            return jrs.Error(value.code, value.message, value.data)

        return method


def _identity(value: Any) -> Any:
    return value


def _no_validation(_: Any) -> None:
    return None
