"""The one module that knows jsonrpcserver: incoming calls -> the bridge's `HandlerTable`.

jsonrpcserver dispatches every call but the table's `early` ones: our router has already
decoded and validated the envelope, so it gets a decoded dict with schema validation off, and
each handler receives the request context and the raw params. Importing jsonrpcserver is a
measured cost (jsonschema, oslash; figures in the RFC), so the early methods (the handshake and
`session/new`, what a client waits for before its user can type) are answered by the same
handlers directly, through the same `invoke` and the same redacting `error_frame`, and the
import runs in a worker thread, first asked for after those answers; see
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md and
docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
import msgspec
from msgspec import UNSET

from acp_protocol.jsonrpc import JSONRPC_VERSION, ResultResponse
from acp_server.redaction import redact, redact_value

from . import jsonrpcserver_core
from .handlers import HandlerTable, NotificationHandler, RequestHandler, invoke
from .peer import IncomingRequest, error_frame

log = logging.getLogger(__name__)


def _load_jsonrpcserver() -> Any:
    # 5.0.9 calls importlib.resources.read_text (-> open_text) at import, deprecated on 3.11
    # and 3.12 only.
    warnings.filterwarnings("ignore", r"(read_text|open_text) is deprecated", DeprecationWarning)
    # Its dispatch core only: no jsonschema validator we would switch off, no HTTP server.
    return jsonrpcserver_core.load()


class JsonRpcDispatcher:
    """Routes calls to registered handlers; everything but the early methods via
    jsonrpcserver."""

    def __init__(self) -> None:
        self._table = HandlerTable()
        self._jrs: Any = None
        self._jrs_methods: dict[str, Callable[..., Awaitable[Any]]] = {}
        self._jrs_notifications: dict[str, Callable[..., Awaitable[Any]]] = {}
        self._loading = anyio.Lock()

    def install(self, table: HandlerTable) -> None:
        """Route calls by `table` from now on (before the first call is read)."""
        self._table = table

    async def load(self) -> None:
        """Import jsonrpcserver (once, in a worker thread: the event loop keeps serving) and
        build its method table."""
        async with self._loading:
            if self._jrs is not None:
                return
            jrs = await anyio.to_thread.run_sync(_load_jsonrpcserver)
            for name, handler in self._table.requests.items():
                self._jrs_methods[name] = _as_jrs_request(jrs, handler)
            for name, notification in self._table.notifications.items():
                self._jrs_notifications[name] = _as_jrs_notification(jrs, notification)
            self._jrs = jrs

    async def dispatch_request(self, request: IncomingRequest) -> Any:
        gate = self._table.gate
        refusal = gate(request.method) if gate is not None else None
        if refusal is not None:
            return error_frame(request.id, refusal.code, refusal.message, refusal.data)
        early = self._table.requests.get(request.method)
        if early is not None and request.method in self._table.early:
            ok, value = await invoke(early, request, request.params)
            if ok:
                return ResultResponse(JSONRPC_VERSION, request.id, value)
            return error_frame(request.id, value.code, value.message, value.data)
        if self._jrs is None:  # the lock costs an event-loop pass per call otherwise
            await self.load()
        return await self._jrs.async_dispatch_to_serializable(
            {
                "jsonrpc": JSONRPC_VERSION,
                "method": request.method,
                "params": [request.params],
                "id": request.id,
            },
            self._jrs_methods,
            context=request,
            deserializer=_identity,
            validator=_no_validation,
        )

    async def dispatch_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method not in self._table.notifications:
            return  # unknown notifications are ignored, as ACP asks
        if self._jrs is None:  # the lock costs an event-loop pass per call otherwise
            await self.load()
        await self._jrs.async_dispatch_to_serializable(
            {"jsonrpc": JSONRPC_VERSION, "method": method, "params": [params]},
            self._jrs_notifications,
            context=None,
            deserializer=_identity,
            validator=_no_validation,
        )


def _identity(value: Any) -> Any:
    return value


def _no_validation(_: Any) -> None:
    return None


def _as_jrs_request(jrs: Any, handler: RequestHandler) -> Callable[..., Awaitable[Any]]:
    async def method(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
        ok, value = await invoke(handler, request, params)
        if ok:
            return jrs.Success(value)
        # Redacted as `error_frame` redacts: one rule for every error the client sees.
        if value.data is UNSET:
            return jrs.Error(value.code, redact(value.message))
        return jrs.Error(value.code, redact(value.message), redact_value(value.data))

    return method


def _as_jrs_notification(jrs: Any, handler: NotificationHandler) -> Callable[..., Awaitable[Any]]:
    async def method(_context: None, params: msgspec.Raw | None) -> Any:
        try:
            await handler(params)
        except Exception:
            log.exception("notification handler failed")
        return jrs.Success(None)  # discarded: notifications are never answered

    return method
