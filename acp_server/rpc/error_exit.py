"""The one error exit: every JSON-RPC error the client sees is built here, its text redacted
(acp_server/redaction.py).

The router (rpc/dispatch.py) answers every refused or failed call through `error_frame`; the
peer (rpc/peer.py) uses it for the lines it answers itself (parse errors, invalid envelopes,
over-long lines, `$/cancel_request`). Nothing else builds an error response (tests/test_layers.py
checks the imports). An error carried in an update (a v2 turn's idle state) is built by
`error_object`, redacted the same way.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from acp_protocol.jsonrpc import JSONRPC_VERSION, ErrorObject, ErrorResponse, RequestId
from acp_server.redaction import redact, redact_value

__all__ = ["ErrorResponse", "error_frame", "error_object"]


def error_object(code: int, message: str, data: Any = UNSET) -> ErrorObject:
    """An error, its message and data redacted: the `error` of a response, or the error an
    update carries (ACP v2's idle state after a failed turn)."""
    return ErrorObject(code, redact(message), redact_value(data))


def error_frame(request_id: RequestId, code: int, message: str, data: Any = UNSET) -> ErrorResponse:
    """An error response frame, its message and data redacted."""
    return ErrorResponse(JSONRPC_VERSION, request_id, error_object(code, message, data))
