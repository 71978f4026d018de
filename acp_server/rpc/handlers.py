"""What a method handler is, how it refuses a call, and the typed table the bridge hands over.

The bridge builds one `HandlerTable` keyed by the method names of `acp_protocol.methods`; the
dispatcher (rpc/jsonrpcserver_adapter.py) only routes by it. Handlers never let an exception's
text reach the client.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET

from acp_protocol import errors

from .peer import IncomingRequest

log = logging.getLogger(__name__)

T = TypeVar("T")

RequestHandler = Callable[[IncomingRequest, msgspec.Raw | None], Awaitable[Any]]
NotificationHandler = Callable[[msgspec.Raw | None], Awaitable[None]]
RequestGate = Callable[[str], "RpcError | None"]
"""Asked with each request's method before it is routed: an error to answer instead, or None."""


@dataclass(frozen=True)
class HandlerTable:
    """The handlers of incoming calls, by method name; a name not here answers -32601."""

    requests: Mapping[str, RequestHandler] = field(default_factory=dict)
    notifications: Mapping[str, NotificationHandler] = field(default_factory=dict)
    gate: RequestGate | None = None
    """The connection's ordering rule (ACP: `initialize` first), applied to every request,
    known method or not, before it is routed."""
    early: frozenset[str] = frozenset()
    """Methods the router answers itself, without waiting for jsonrpcserver's import: those a
    client waits for before its user can type (the handshake and `session/new`)."""


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


async def invoke(
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
