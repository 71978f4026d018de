"""Newline-delimited framing over a byte stream, with a per-line size limit.

An over-long line is skipped (not buffered) and reported as `OVERSIZED`, so one bad message
costs one error response, never the connection or unbounded memory.
"""

from __future__ import annotations

from typing import Final

import anyio
from anyio.abc import ByteReceiveStream

DEFAULT_MAX_LINE_BYTES: Final = 64 * 1024 * 1024


class _Oversized:
    def __repr__(self) -> str:
        return "OVERSIZED"


OVERSIZED: Final = _Oversized()


class LineReader:
    """Yields one frame per `\\n`-terminated line; a trailing `\\r` is dropped (CRLF input)."""

    def __init__(
        self, stream: ByteReceiveStream, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        self._stream = stream
        self._max = max_line_bytes
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already known to hold no newline
        self._eof = False

    async def receive_line(self) -> bytes | _Oversized:
        """Return the next non-blank line; raise `anyio.EndOfStream` when input is exhausted."""
        while True:
            line = await self._next_raw()
            if line is OVERSIZED or (isinstance(line, bytes) and line.strip()):
                return line

    async def _next_raw(self) -> bytes | _Oversized:
        oversized = False
        while True:
            newline = self._buf.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._buf[:newline])
                del self._buf[: newline + 1]
                self._scanned = 0
                if oversized or len(line) > self._max:
                    return OVERSIZED
                return line[:-1] if line.endswith(b"\r") else line
            if len(self._buf) > self._max:
                # Drop what we have and keep discarding until the line ends.
                oversized = True
                self._buf.clear()
            self._scanned = len(self._buf)
            if self._eof:
                if oversized:
                    return OVERSIZED
                if not self._buf:
                    raise anyio.EndOfStream
                line = bytes(self._buf)  # a final line without its newline
                self._buf.clear()
                self._scanned = 0
                return line[:-1] if line.endswith(b"\r") else line
            try:
                self._buf += await self._stream.receive()
            except anyio.EndOfStream:
                self._eof = True
