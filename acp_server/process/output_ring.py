"""The bounded output of a background item: the last `limit` bytes it wrote, where its reader
is, and what was cut before the reader got to it.

A background item (a dev server, a watcher) may print without end for as long as the session
lives, so only its tail is kept, and the reader (the model, through a tool) is told how much it
never saw. Positions are absolute byte offsets into everything the item ever wrote; newlines are
counted the same way, so "N new lines" stays right after the bytes holding them were dropped.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class OutputRead:
    """What one read returned, and what it did not."""

    text: str
    """The new output, decoded as UTF-8 with replacement characters."""
    dropped: int
    """Bytes written since the last read that were dropped before this read (the buffer keeps
    only its last `limit` bytes)."""
    dropped_lines: int
    """Lines among `dropped`."""
    left: int
    """Bytes still unread after this read (it stopped at its `max_bytes`)."""


class OutputRing:
    """The last `limit` bytes of one stream, kept as chunks so dropping the head is cheap."""

    __slots__ = (
        "_chunks",
        "_kept",
        "_limit",
        "_read_at",
        "_read_lines",
        "_start_clean",
        "_start_lines",
        "lines",
        "start",
        "written",
    )

    def __init__(self, limit: int) -> None:
        if limit <= 0:
            raise ValueError("limit must be positive")
        self._limit = limit
        self._chunks: deque[bytes] = deque()
        self._kept = 0
        self.written = 0
        """Bytes ever written."""
        self.lines = 0
        """Newlines ever written."""
        self.start = 0
        """The offset of the first byte kept."""
        self._start_lines = 0
        self._start_clean = True
        self._read_at = 0
        self._read_lines = 0

    def add(self, chunk: bytes) -> None:
        """Keep `chunk`, dropping from the head what is beyond the limit."""
        if not chunk:
            return
        self._chunks.append(chunk)
        self._kept += len(chunk)
        self.written += len(chunk)
        self.lines += chunk.count(b"\n")
        while self._kept > self._limit:
            head = self._chunks[0]
            cut = min(len(head), self._kept - self._limit)
            if cut == len(head):
                self._chunks.popleft()
            else:
                self._chunks[0] = head[cut:]
            self._kept -= cut
            self.start += cut
            self._start_lines += head.count(b"\n", 0, cut)
            self._start_clean = head[cut - 1] == 0x0A  # the cut fell after a newline

    @property
    def limit(self) -> int:
        """How many of the latest bytes are kept."""
        return self._limit

    @property
    def new_bytes(self) -> int:
        """Bytes written since the last read (dropped ones included)."""
        return self.written - self._read_at

    @property
    def new_lines(self) -> int:
        """Lines written since the last read (dropped ones included); a last line without its
        newline yet counts once it has any byte."""
        partial = 1 if self.new_bytes and not self._ends_with_newline() else 0
        return self.lines - self._read_lines + partial

    def read(self, max_bytes: int) -> OutputRead:
        """The output written since the last read, at most `max_bytes` of it (from its start),
        and move the reader past it. When the buffer's cut fell inside a line, what is left of
        that line is dropped too (the text starts with a whole line); a character the end of
        this read would split is left for the next read."""
        dropped = max(0, self.start - self._read_at)
        dropped_lines = self._start_lines - self._read_lines if dropped else 0
        if dropped:
            self._read_at, self._read_lines = self.start, self._start_lines
        data = self._slice(self._read_at, min(self.written, self._read_at + max_bytes))
        skip = 0
        if dropped and not self._start_clean:
            newline = data.find(b"\n")
            skip = newline + 1 if newline >= 0 else _orphans(data)
            dropped_lines += 1 if newline >= 0 else 0
        end = max(skip, len(data) - _unfinished(data))
        taken = data[:end]
        self._read_at += len(taken)
        self._read_lines += taken.count(b"\n")
        return OutputRead(
            text=taken[skip:].decode("utf-8", errors="replace"),
            dropped=dropped + skip,
            dropped_lines=dropped_lines,
            left=self.written - self._read_at,
        )

    def tail(self, max_bytes: int) -> str:
        """The last `max_bytes` of what is kept, decoded, without moving the reader (what a
        display of the item shows)."""
        data = self._slice(max(self.start, self.written - max_bytes), self.written)
        data = data[_orphans(data) : len(data) - _unfinished(data)]
        return data.decode("utf-8", errors="replace")

    def _slice(self, begin: int, end: int) -> bytes:
        """The kept bytes between two absolute offsets (both within what is kept)."""
        data = b"".join(self._chunks)
        return data[begin - self.start : end - self.start]

    def _ends_with_newline(self) -> bool:
        return bool(self._chunks) and self._chunks[-1].endswith(b"\n")


def _orphans(data: bytes) -> int:
    """How many continuation bytes open `data` (the rest of a character cut off before it)."""
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
        skip += 1
    return skip


def _unfinished(data: bytes) -> int:
    """How many bytes at the end of `data` start a UTF-8 character they do not finish."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: look further back for the lead
        if byte >= 0xF0:
            need = 4
        elif byte >= 0xE0:
            need = 3
        elif byte >= 0xC0:
            need = 2
        else:
            return 0
        return back if back < need else 0
    return 0
