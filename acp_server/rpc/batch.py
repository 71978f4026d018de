"""A JSON-RPC 2.0 batch (an array of requests and notifications on one line): its answers,
written together as one array once every request in it is answered.

Only a connection that speaks ACP v2 reads batches (the v2 transports page follows JSON-RPC
2.0's batch rules; v1 has none: any array is one `-32600`). The peer dispatches a batch's
elements in order, each request admitted before the next element as a line's is; entries that
are not valid requests are answered in the array (`-32600` each); notifications are never
answered, so an all-notification batch gets no reply at all; an empty array is one `-32600`.
Work a request does after its answer (a new session's command list) waits until the array is
written. See docs/rfc/implemented/architecture/2026-12-06-acp-v2-beside-v1.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio

__all__ = ["Batch"]

FollowUp = Callable[[], Awaitable[None]]


class Batch:
    """The answers of one batch, gathered in the order they come."""

    def __init__(self) -> None:
        self.frames: list[Any] = []
        self.follow_ups: list[tuple[str, FollowUp]] = []
        self._open = 0
        self._sealed = False
        self._done = anyio.Event()

    def started(self) -> None:
        """A request of the batch was dispatched; its answer is awaited."""
        self._open += 1

    def refused(self, frame: Any) -> None:
        """An element that is not a valid request: its error is part of the array."""
        self.frames.append(frame)

    def answered(self, frame: Any, method: str, follow_ups: Iterable[FollowUp]) -> None:
        """A request's answer, and the work to do once the array is written."""
        self.frames.append(frame)
        self.follow_ups.extend((method, f) for f in follow_ups)
        self._open -= 1
        self._check()

    def seal(self) -> None:
        """Every element was dispatched: the array is complete once the open requests are
        answered."""
        self._sealed = True
        self._check()

    async def complete(self) -> list[Any]:
        """The array's frames, once every request in it is answered (empty: nothing to
        write)."""
        await self._done.wait()
        return self.frames

    def _check(self) -> None:
        if self._sealed and self._open == 0:
            self._done.set()
