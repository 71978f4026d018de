"""How a method handler refuses a call: `RpcError`, answered through the router's one error
exit (rpc/dispatch.py, rpc/error_exit.py). Handlers never let an exception's text reach the
client: anything else they raise is answered -32603 without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import UNSET


class RpcError(Exception):
    """Raised by a handler to answer with a specific JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = UNSET) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


RequestGate = Callable[[str], RpcError | None]
"""Asked with each request's method before it is routed: an error to answer instead, or None."""
