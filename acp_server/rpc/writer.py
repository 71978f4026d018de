"""The single ordered writer: every frame leaves through one queue, in the order it was queued.

Ordering is the protocol's flush barrier: a turn's updates are queued before its prompt
response, so they are on the wire before it (ACP requires it on the cancel path, and clients
treat the response as end of turn). See
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteSendStream

log = logging.getLogger(__name__)

_BATCH_BYTES = 256 * 1024


class FrameWriter:
    """Encodes frames and writes them from one task; a gone client turns sends into no-ops."""

    def __init__(self, stream: ByteSendStream, buffer_frames: int = 4096) -> None:
        self._stream = stream
        self._encoder = msgspec.json.Encoder()
        self._send, self._receive = anyio.create_memory_object_stream[bytes](buffer_frames)
        self.broken = anyio.Event()
        self._stopped = False
        self._queued = 0
        self._idle = anyio.Event()
        self._idle.set()

    async def send(self, frame: Any) -> None:
        """Queue one frame (a Struct or dict); waits only when the client is far behind."""
        if self._stopped:
            return
        data = self._encoder.encode(frame) + b"\n"
        if self._idle.is_set():
            self._idle = anyio.Event()
        self._queued += 1
        try:
            await self._send.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._queued -= 1

    async def drained(self) -> None:
        """Wait until every frame queued so far is written, or the writer has stopped."""
        while self._queued and not self._stopped:
            await self._idle.wait()

    def close(self) -> None:
        """No more frames will be queued; `run` returns once the queue is written."""
        self._send.close()

    async def run(self) -> None:
        """Write queued frames until `close()` and the queue is empty, or the client is gone."""
        try:
            async with self._receive:
                await self._write_batches()
        finally:
            self._stopped = True
            self._send.close()
            self._idle.set()

    async def _write_batches(self) -> None:
        async for first in self._receive:
            batch = [first]
            size = len(first)
            while size < _BATCH_BYTES:
                try:
                    item = self._receive.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
                batch.append(item)
                size += len(item)
            try:
                await self._stream.send(b"".join(batch))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                log.info("client stopped reading our output (%s)", type(exc).__name__)
                self.broken.set()
                return
            self._queued -= len(batch)
            if not self._queued:
                self._idle.set()
