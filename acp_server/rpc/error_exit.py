"""The one error exit: every JSON-RPC error the client sees is built here, its text redacted
(acp_server/redaction.py).

The router (rpc/dispatch.py) answers every refused or failed call through `error_frame`; the
peer (rpc/peer.py) uses it for the lines it answers itself (parse errors, invalid envelopes,
over-long lines, `$/cancel_request`). Nothing else builds an error response (tests/test_layers.py
checks the imports).
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from acp_protocol.jsonrpc import JSONRPC_VERSION, ErrorObject, ErrorResponse, RequestId
from acp_server.redaction import redact, redact_value

__all__ = ["ErrorResponse", "error_frame"]


def error_frame(request_id: RequestId, code: int, message: str, data: Any = UNSET) -> ErrorResponse:
    """An error response frame, its message and data redacted."""
    error = ErrorObject(code, redact(message), redact_value(data))
    return ErrorResponse(JSONRPC_VERSION, request_id, error)
