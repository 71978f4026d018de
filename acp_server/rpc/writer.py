"""The single ordered writer: every frame leaves through one queue, in the order it was queued.

Ordering is the protocol's flush barrier: a turn's updates are queued before its prompt
response, so they are on the wire before it (ACP requires it on the cancel path, and clients
treat the response as end of turn). See
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md.

Queueing a frame does not yield to the event loop unless the client is far behind (then the
producer waits: backpressure) or `_FAIRNESS_FRAMES` frames were queued in a row (then it yields
once, so a long stream cannot starve the reader that must see a cancel). A yield per frame made
every streamed chunk cost a full event-loop pass and one write system call.

Past the high-water mark the peer also stops reading input (`room`) until the client has read
the queue down to half the mark: a client that sends requests but never reads then fills its
own pipe, not our memory.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteSendStream

log = logging.getLogger(__name__)

_BATCH_BYTES = 256 * 1024
_HIGH_WATER_BYTES = 4 * 1024 * 1024
_FAIRNESS_FRAMES = 64


class FrameWriter:
    """Encodes frames and writes them from one task; a gone client turns sends into no-ops."""

    def __init__(self, stream: ByteSendStream) -> None:
        self._stream = stream
        self._encoder = msgspec.json.Encoder()
        self._queue: deque[bytes] = deque()
        self._queued_bytes = 0
        self._since_yield = 0
        self._closed = False
        self._stopped = False
        self.broken = anyio.Event()
        self._wakeup = anyio.Event()
        self._drained = anyio.Event()
        self._drained.set()
        self._space = anyio.Event()
        self._space.set()
        self._queued_frames = 0
        self._written_frames = 0
        self._progress = anyio.Event()

    async def send(self, frame: Any) -> None:
        """Queue one frame (a Struct or dict); waits only when the client is far behind."""
        if self._stopped or self._closed:
            return
        data = self._encoder.encode(frame) + b"\n"
        self._queue.append(data)
        self._queued_frames += 1
        self._queued_bytes += len(data)
        if self._drained.is_set():
            self._drained = anyio.Event()
        self._wakeup.set()
        if self._queued_bytes > _HIGH_WATER_BYTES:
            if self._space.is_set():
                self._space = anyio.Event()
            await self._space.wait()
            self._since_yield = 0
        else:
            self._since_yield += 1
            if self._since_yield >= _FAIRNESS_FRAMES:
                self._since_yield = 0
                await anyio.lowlevel.checkpoint()

    async def room(self) -> None:
        """Return once the queue is under its high-water mark, or the writer has stopped.

        The reader waits here before each line: a client that sends requests but never reads
        our output then fills its own pipe instead of our memory.
        """
        while self._queued_bytes > _HIGH_WATER_BYTES and not self._stopped:
            if self._space.is_set():
                self._space = anyio.Event()
            await self._space.wait()

    async def drained(self) -> None:
        """Wait until every frame queued so far is written, or the writer has stopped."""
        while self._queue and not self._stopped:
            await self._drained.wait()

    async def sent(self) -> None:
        """Wait until every frame queued so far is written (frames queued after this call do
        not delay it, unlike `drained`), or the writer has stopped."""
        target = self._queued_frames
        while self._written_frames < target and not self._stopped:
            if self._progress.is_set():
                self._progress = anyio.Event()
            await self._progress.wait()

    def close(self) -> None:
        """No more frames will be queued; `run` returns once the queue is written."""
        self._closed = True
        self._wakeup.set()

    async def run(self) -> None:
        """Write queued frames until `close()` and the queue is empty, or the client is gone."""
        try:
            while True:
                if not self._queue:
                    if self._closed:
                        return
                    self._wakeup = anyio.Event()
                    await self._wakeup.wait()
                    continue
                batch, frames = self._take_batch()
                try:
                    await self._stream.send(batch)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                    log.info("client stopped reading our output (%s)", type(exc).__name__)
                    self.broken.set()
                    return
                self._written_frames += frames
                self._progress.set()
                if not self._queue:
                    self._drained.set()
        finally:
            self._stopped = True
            self._queue.clear()
            self._queued_bytes = 0
            self._drained.set()
            self._space.set()
            self._progress.set()

    def _take_batch(self) -> tuple[bytes, int]:
        pieces = []
        size = 0
        while self._queue and size < _BATCH_BYTES:
            piece = self._queue.popleft()
            pieces.append(piece)
            size += len(piece)
        self._queued_bytes -= size
        if self._queued_bytes <= _HIGH_WATER_BYTES // 2:
            self._space.set()
        return b"".join(pieces), len(pieces)
