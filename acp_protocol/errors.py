"""ACP / JSON-RPC error codes (the schema's `ErrorCode`). Any other int32 is also allowed."""

from __future__ import annotations

__all__ = [
    "AUTH_REQUIRED",
    "DEFAULT_MESSAGES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
]

PARSE_ERROR = -32700
"""Invalid JSON was received."""
INVALID_REQUEST = -32600
"""The JSON sent is not a valid request object."""
METHOD_NOT_FOUND = -32601
"""The method does not exist or is not available."""
INVALID_PARAMS = -32602
"""Invalid method parameters."""
INTERNAL_ERROR = -32603
"""Internal error."""
REQUEST_CANCELLED = -32800
"""The request was cancelled (`$/cancel_request` or internal cancellation; never for
`session/cancel`, which ends the prompt with stop reason "cancelled")."""
AUTH_REQUIRED = -32000
"""Authentication is required before this method can be used."""
RESOURCE_NOT_FOUND = -32002
"""A given resource, such as a file, was not found."""
UNSUPPORTED_PROTOCOL_VERSION = -32022
"""`initialize` asked for a protocol version below every one the agent speaks (ACP v2)."""

DEFAULT_MESSAGES: dict[int, str] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    REQUEST_CANCELLED: "Request cancelled",
    AUTH_REQUIRED: "Authentication required",
    RESOURCE_NOT_FOUND: "Resource not found",
    UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
}
"""A conventional `message` for each known code."""
