"""Errors raised by the peer to the code that uses it."""

from __future__ import annotations

from typing import Any


class RemoteError(Exception):
    """The other side answered one of our requests with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method} failed with {code}: {message}")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class MalformedAnswer(Exception):
    """The other side answered one of our requests with a result of the wrong shape."""

    def __init__(self, method: str, detail: str) -> None:
        super().__init__(f"{method} got a malformed answer: {detail}")
        self.method = method


class PeerClosed(Exception):
    """The other side can no longer answer: its input ended or it stopped reading ours."""


class RequestTimeout(Exception):
    """An outgoing request got no answer in time; `$/cancel_request` was sent for it."""
