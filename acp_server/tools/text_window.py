"""A window of lines cut from a stream of byte chunks, in memory bounded by the window.

`read_file` must cost what it returns, not what the file holds: lines before the window are
skipped chunk by chunk, the window keeps at most `max_bytes`, and the lines after it are only
counted, for at most `count_budget` bytes. Lines end at "\\n" only (so numbers agree with grep
and edit_file); CRLF files keep their "\\r".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

BINARY_SNIFF_BYTES = 8192
"""A NUL byte among a file's first bytes marks it as binary."""


@dataclass(frozen=True)
class TextWindow:
    """Lines `first`..`first + count - 1` of a file, and what is known about the rest."""

    text: str
    first: int
    count: int
    """Lines in `text` (a line cut at the byte cap counts)."""
    total: int | None
    """Lines in the file; None when counting stopped before the end."""
    size: int
    """Bytes in the file (as far as read, when `total` is None)."""
    cut: bool = False
    """The window's only line was longer than the byte cap and is cut."""
    capped: bool = False
    """The byte cap ended the window before the line limit did."""
    binary: bool = False
    """The file looks binary (a NUL byte near its start); `text` is empty."""

    @property
    def more(self) -> bool:
        """Something follows the window."""
        last = self.first + self.count - 1
        return self.cut or self.total is None or self.total > last


def take_window(
    chunks: Iterable[bytes],
    start: int,
    max_lines: int,
    max_bytes: int,
    *,
    size: int,
    count_budget: int,
    check: Callable[[], None],
) -> TextWindow:
    """The window of `max_lines` lines from line `start`, cut at `max_bytes` bytes.

    `size` is the file's size when known up front (grown as bytes arrive otherwise); `check`
    is called before each chunk and raises to stop (the turn signal).
    """
    line = 1  # the number of the line the next byte belongs to
    body = bytearray()
    line_start = 0  # where the window's unfinished line starts in `body`
    taken = 0
    state = "take" if start == 1 else "skip"
    cut = capped = False
    sniffed = bytearray()
    seen = 0
    counted = 0
    ends_in_newline = True
    finished = True
    for chunk in chunks:
        check()
        if not chunk:
            continue
        if len(sniffed) < BINARY_SNIFF_BYTES:
            sniffed += chunk[: BINARY_SNIFF_BYTES - len(sniffed)]
            if b"\0" in sniffed:
                return TextWindow("", start, 0, None, max(size, seen), binary=True)
        seen += len(chunk)
        ends_in_newline = chunk.endswith(b"\n")
        pos, end_of_chunk = 0, len(chunk)
        while pos < end_of_chunk:
            if state == "skip":
                newline = chunk.find(b"\n", pos)
                if newline < 0:
                    break
                line += 1
                pos = newline + 1
                if line == start:
                    state = "take"
            elif state == "take":
                newline = chunk.find(b"\n", pos)
                end = end_of_chunk if newline < 0 else newline + 1
                room = max_bytes - len(body)
                if end - pos > room:
                    if taken == 0:  # one line alone is over the cap: show its beginning
                        body += chunk[pos : pos + room]
                        cut = True
                        taken = 1
                    else:
                        del body[line_start:]
                    capped = True
                    state = "count"
                    continue
                body += chunk[pos:end]
                pos = end
                if newline >= 0:
                    taken += 1
                    line += 1
                    line_start = len(body)
                    if taken == max_lines:
                        state = "count"
            else:
                if counted >= count_budget:
                    finished = False
                    break
                line += chunk.count(b"\n", pos)
                counted += end_of_chunk - pos
                pos = end_of_chunk
        if not finished:
            break
    if state == "take" and len(body) > line_start:
        taken += 1  # the file's last line, without a final newline
    total = None
    if finished:
        total = line if not ends_in_newline else line - 1
    text = body.decode("utf-8", errors="replace")
    return TextWindow(text, start, taken, total, max(size, seen), cut=cut, capped=capped)


def window_of_text(text: str, start: int, max_lines: int, max_bytes: int) -> TextWindow:
    """`take_window` over text already in memory (a client's `fs/read_text_file` answer)."""
    data = text.encode("utf-8", errors="replace")
    return take_window(
        [data], start, max_lines, max_bytes, size=len(data), count_budget=len(data), check=_go_on
    )


def _go_on() -> None:
    return None
