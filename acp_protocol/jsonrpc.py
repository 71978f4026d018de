"""JSON-RPC 2.0 envelopes: the frame shapes on the wire, with no I/O.

Incoming frames are decoded loosely (`Frame`) so that the router can tell a request with a bad
field from a response and still answer with the request's id; outgoing frames are strict
Structs whose field order is the wire order.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

JSONRPC_VERSION = "2.0"

RequestId = int | str | None
"""ACP's `RequestId`: int64, string or null. An absent id (a notification) is `UNSET`."""


class Frame(msgspec.Struct):
    """Any incoming JSON object, before it is classified.

    `jsonrpc`, `id` and `method` are typed `Any` on purpose: a frame with a wrong-typed field is
    still decoded, so the router can answer `-32600` with the id when the id itself is valid.
    `params`, `result` and `error` stay raw until the method (or pending request) is known.
    """

    jsonrpc: Any = UNSET
    id: Any = UNSET
    method: Any = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: msgspec.Raw | UnsetType = UNSET


class ErrorObject(msgspec.Struct, omit_defaults=True):
    """The `error` member of an error response."""

    code: int
    message: str
    data: Any = UNSET


# The envelopes below have no default for `jsonrpc`: with omit_defaults a defaulted constant
# would silently vanish from the encoded frame.


class OutgoingRequest(msgspec.Struct):
    jsonrpc: str
    id: int | str
    method: str
    params: Any


class OutgoingNotification(msgspec.Struct):
    jsonrpc: str
    method: str
    params: Any


class ResultResponse(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class ErrorResponse(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    error: ErrorObject


INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def valid_request_id(value: Any, *, null: bool = True) -> bool:
    """True for an id ACP accepts: an int64 (not a bool), a string, or null (ACP v1; v2 refuses
    null ids: `null=False`).

    JSON decodes integers of any size; an id outside int64 is refused rather than echoed,
    because a client in a language with 64-bit integers could not match the echo to its request.
    """
    if type(value) is int:
        return INT64_MIN <= value <= INT64_MAX
    return (null and value is None) or isinstance(value, str)
