"""Incoming requests and notifications -> handlers, through jsonrpcserver.

jsonrpcserver is the registry and dispatcher of incoming calls: our router has already decoded
and validated the envelope, so it gets a decoded dict with schema validation off, and each
handler receives the request context and the raw params. Handlers never let an exception's text
reach the client. Importing jsonrpcserver costs ~200 ms (jsonschema, oslash), so the `initialize`
handshake is answered without it and the import runs once that answer is written; see
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import msgspec
from msgspec import UNSET

from protocol import errors
from protocol.jsonrpc import JSONRPC_VERSION, ResultResponse

from .peer import IncomingRequest, error_frame

log = logging.getLogger(__name__)

T = TypeVar("T")

RequestHandler = Callable[[IncomingRequest, msgspec.Raw | None], Awaitable[Any]]
NotificationHandler = Callable[[msgspec.Raw | None], Awaitable[None]]

HANDSHAKE_METHOD = "initialize"


class RpcError(Exception):
    """Raised by a handler to answer with a specific JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = UNSET) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def decode_params(params: msgspec.Raw | None, params_type: type[T]) -> T:
    """Decode a method's params, turning a mismatch into -32602 with msgspec's field path."""
    try:
        return msgspec.json.decode(params if params is not None else b"null", type=params_type)
    except msgspec.ValidationError as exc:
        raise RpcError(errors.INVALID_PARAMS, "Invalid params", str(exc)) from None
    except msgspec.DecodeError as exc:  # unreachable for envelope-checked params; kept exact
        raise RpcError(errors.INVALID_PARAMS, "Invalid params", str(exc)) from None


async def _invoke(
    handler: RequestHandler, request: IncomingRequest, params: msgspec.Raw | None
) -> tuple[bool, Any]:
    """Run a handler; (True, result) or (False, RpcError). Cancellation propagates."""
    try:
        return True, await handler(request, params)
    except RpcError as exc:
        return False, exc
    except Exception:
        log.exception("handler for %s failed", request.method)
        return False, RpcError(errors.INTERNAL_ERROR, "Internal error")


def _load_jsonrpcserver() -> Any:
    # 5.0.9 calls importlib.resources.read_text (-> open_text) at import, deprecated on 3.11
    # and 3.12 only.
    warnings.filterwarnings("ignore", r"(read_text|open_text) is deprecated", DeprecationWarning)
    import jsonrpcserver

    return jsonrpcserver


class JsonRpcDispatcher:
    """Routes calls to registered handlers; everything but the handshake via jsonrpcserver."""

    def __init__(self) -> None:
        self._requests: dict[str, RequestHandler] = {}
        self._notifications: dict[str, NotificationHandler] = {}
        self._jrs: Any = None
        self._jrs_methods: dict[str, Callable[..., Awaitable[Any]]] = {}
        self._jrs_notifications: dict[str, Callable[..., Awaitable[Any]]] = {}
        self._loading = anyio.Lock()

    def request(self, method: str, handler: RequestHandler) -> None:
        """Register the handler of request `method`."""
        self._requests[method] = handler

    def notification(self, method: str, handler: NotificationHandler) -> None:
        """Register the handler of notification `method`."""
        self._notifications[method] = handler

    async def load(self) -> None:
        """Import jsonrpcserver (once) and build its method table.

        The import runs on the event loop thread and blocks it for ~0.2 s, once, right after
        the handshake when no session exists yet. A worker thread would keep the loop free but
        costs 3.5 MiB of idle RSS for the thread's own malloc arena.
        """
        async with self._loading:
            if self._jrs is not None:
                return
            jrs = _load_jsonrpcserver()
            for name, handler in self._requests.items():
                self._jrs_methods[name] = _as_jrs_request(jrs, handler)
            for name, notification in self._notifications.items():
                self._jrs_notifications[name] = _as_jrs_notification(jrs, notification)
            self._jrs = jrs

    async def dispatch_request(self, request: IncomingRequest) -> Any:
        if request.method == HANDSHAKE_METHOD and HANDSHAKE_METHOD in self._requests:
            ok, value = await _invoke(self._requests[HANDSHAKE_METHOD], request, request.params)
            if ok:
                return ResultResponse(JSONRPC_VERSION, request.id, value)
            return error_frame(request.id, value.code, value.message, value.data)
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
        if method not in self._notifications:
            return  # unknown notifications are ignored, as ACP asks
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
        ok, value = await _invoke(handler, request, params)
        if ok:
            return jrs.Success(value)
        if value.data is UNSET:
            return jrs.Error(value.code, value.message)
        return jrs.Error(value.code, value.message, value.data)

    return method


def _as_jrs_notification(jrs: Any, handler: NotificationHandler) -> Callable[..., Awaitable[Any]]:
    async def method(_context: None, params: msgspec.Raw | None) -> Any:
        try:
            await handler(params)
        except Exception:
            log.exception("notification handler failed")
        return jrs.Success(None)  # discarded: notifications are never answered

    return method
