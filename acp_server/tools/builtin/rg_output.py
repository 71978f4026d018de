"""Reading ripgrep's output as it streams: what `grep` and `glob` keep is bounded by their caps.

rg searches on every core, so results come in no fixed order; each reader keeps the first
ones in path order (`_Smallest`: at most twice the cap held at once) and counts all.

- `GrepReader` reads `rg --json`: one JSON message a line, so file names with line breaks or
  odd bytes cannot desynchronise it. It decodes the matches of a file only while that file
  can still be among the first `max_lines` (a file's messages come together, after its
  `begin`), counts the rest by their prefix, and takes the totals from rg's closing
  `summary`. A message longer than `MESSAGE_BYTES` (a huge matching line) is not held whole:
  its head names the file and the line is reported as not shown.
- `GlobReader` reads `rg --files --null`, matches each path against the pattern
  (`PathPattern`: `*`, `?`, `[...]` within a name, `**` across directories) and keeps the
  first `max_paths`, counting all. The matching is plain `fnmatch` per name (names are at
  most 255 bytes, and Python's `fnmatch` compiles to atomic groups, so one match is short)
  and a set-of-states walk over the segments (linear in segments x depth, no backtracking).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import fnmatch
import os
import re
from collections.abc import Sequence

import msgspec

MESSAGE_BYTES = 1 << 20
"""The most of one rg message (one JSON line) held at once."""
PATH_BYTES = 1 << 16
"""The most of one path held at once (Linux paths are at most 4096 bytes)."""

_MATCH = b'{"type":"match","data":'
_BEGIN = b'{"type":"begin"'
_TYPED = b'{"type":"'
_LINES = b',"lines":'


class _Text(msgspec.Struct):
    text: str | None = None
    bytes: str | None = None

    def value(self) -> str:
        if self.text is not None:
            return self.text
        try:
            return base64.b64decode(self.bytes or "").decode("utf-8", errors="replace")
        except (binascii.Error, ValueError):
            return "?"


class _Path(msgspec.Struct):
    path: _Text


class _Match(msgspec.Struct):
    path: _Text
    lines: _Text
    line_number: int | None = None


class _Stats(msgspec.Struct):
    matched_lines: int = 0
    searches: int = 0
    searches_with_match: int = 0


class _SummaryData(msgspec.Struct):
    stats: _Stats


class _Message(msgspec.Struct):
    type: str
    data: msgspec.Raw


_match_decoder = msgspec.json.Decoder(_Match)
_path_decoder = msgspec.json.Decoder(_Path)
_message_decoder = msgspec.json.Decoder(_Message)
_summary_decoder = msgspec.json.Decoder(_SummaryData)


class _Lines:
    """Splits a byte stream at `separator`, holding at most `limit` bytes of a piece; a
    longer piece is passed on cut, with `whole=False`."""

    def __init__(self, separator: bytes, limit: int) -> None:
        self._separator = separator
        self._limit = limit
        self._partial = bytearray()
        self._cut = False

    def split(self, chunk: bytes) -> list[tuple[bytes, bool]]:
        pieces: list[tuple[bytes, bool]] = []
        start = 0
        while True:
            end = chunk.find(self._separator, start)
            self._hold(chunk[start : len(chunk) if end < 0 else end])
            if end < 0:
                return pieces
            pieces.append((bytes(self._partial), not self._cut))
            self._partial.clear()
            self._cut = False
            start = end + 1

    def rest(self) -> tuple[bytes, bool] | None:
        if not self._partial:
            return None
        piece = (bytes(self._partial), not self._cut)
        self._partial.clear()
        return piece

    def _hold(self, data: bytes) -> None:
        room = self._limit - len(self._partial)
        if len(data) > room:
            self._cut = True
            data = data[: max(room, 0)]
        self._partial += data


_Key = tuple[tuple[str, ...], int]


class _Smallest:
    """The `limit` smallest items by key among all offered, in order, in O(limit) memory:
    rg searches in parallel, so its output comes in no fixed order; what is shown is the
    first in path order (depth first, names compared component by component, as
    `rg --sort path` would print them)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._items: list[tuple[_Key, str]] = []
        self.bound: _Key | None = None
        """Once `limit` items are kept, nothing above this key can be among them."""

    def full_above(self, key: _Key) -> bool:
        return self.bound is not None and key > self.bound

    def offer(self, key: _Key, item: str) -> None:
        if self._limit <= 0 or self.full_above(key):
            return
        self._items.append((key, item))
        if len(self._items) >= 2 * self._limit:
            self._trim()

    def _trim(self) -> None:
        self._items.sort(key=lambda pair: pair[0])
        del self._items[self._limit :]
        if len(self._items) == self._limit:
            self.bound = self._items[-1][0]

    def result(self) -> list[str]:
        self._trim()
        return [item for _, item in self._items]


def path_key(relative: str) -> tuple[str, ...]:
    return tuple(relative.split("/"))


class GrepReader:
    """Reads `rg --json` output; keeps at most `max_lines` matches, each cut to
    `line_chars` characters. rg searched `.` in `root`, or `root` itself as its stdin when
    `single_file`: the paths shown are made absolute under `root`."""

    def __init__(self, max_lines: int, line_chars: int, root: str, single_file: bool) -> None:
        self.root = root
        self.single_file = single_file
        self.max_lines = max_lines
        self.line_chars = line_chars
        self.lines: list[str] = []
        """The matches shown, in path order (set by `finish`)."""
        self._kept = _Smallest(max_lines)
        self._file: tuple[str, ...] = ()
        """The key of the file whose messages are arriving (rg prints a file's together)."""
        self._skip_file = False
        self.matches = 0
        """Matching lines seen (rg's summary says the same when it is there)."""
        self.matched_files = 0
        self.searched: int | None = None
        """Files searched, from the summary (None: rg ended without one)."""
        self._split = _Lines(b"\n", MESSAGE_BYTES)

    def feed(self, chunk: bytes) -> None:
        for line, whole in self._split.split(chunk):
            self._message(line, whole)

    def finish(self) -> None:
        rest = self._split.rest()
        if rest is not None:
            self._message(*rest)
        self.lines = self._kept.result()

    def _message(self, line: bytes, whole: bool) -> None:
        if line.startswith(_MATCH):
            self.matches += 1
            if not self._skip_file:
                number, shown = self._shown(line, whole)
                self._kept.offer((self._file, number), shown)
        elif line.startswith(_BEGIN):
            self.matched_files += 1
            self._file = ()
            with contextlib.suppress(msgspec.DecodeError):
                begin = _path_decoder.decode(_message_decoder.decode(line).data)
                self._file = path_key(begin.path.value())
            # A file past the matches already kept is counted, not decoded.
            self._skip_file = self._kept.full_above((self._file, 0))
        elif whole and not line.startswith(_TYPED):  # the summary: its keys come sorted
            try:
                message = _message_decoder.decode(line)
                if message.type == "summary":
                    stats = _summary_decoder.decode(message.data).stats
                    self.matches = stats.matched_lines
                    self.matched_files = stats.searches_with_match
                    self.searched = stats.searches
            except msgspec.DecodeError:
                pass

    def _shown(self, line: bytes, whole: bool) -> tuple[int, str]:
        """The match's line number (0 when unknown) and how it is shown."""
        if whole:
            try:
                message = _message_decoder.decode(line)
                match = _match_decoder.decode(message.data)
            except msgspec.DecodeError:
                return 0, "[a match rg reported in a form not understood]"
            text = match.lines.value().rstrip("\n").rstrip("\r")
            if len(text) > self.line_chars:
                text = text[: self.line_chars] + "…"
            number = match.line_number or 0
            return number, f"{self._display(match.path.value())}:{match.line_number}: {text}"
        # Cut: the path comes first, before the line's text, so the head still names it.
        path = "?"
        end = line.find(_LINES, len(_MATCH))
        if end > 0:
            with contextlib.suppress(msgspec.DecodeError):
                path = _path_decoder.decode(line[len(_MATCH) : end] + b"}").path.value()
        size = MESSAGE_BYTES // (1024 * 1024)
        return 0, f"{self._display(path)}: [a matching line over {size} MiB, not shown]"

    def _display(self, path: str) -> str:
        if self.single_file:
            return self.root
        return os.path.join(self.root, path[2:]) if path.startswith("./") else path


class PathPattern:
    """A glob over path segments: `**` is any number of directories, other segments match
    one name with `fnmatch` rules (`*`, `?`, `[...]`), case-sensitively."""

    def __init__(self, segments: Sequence[str]) -> None:
        self._parts: list[re.Pattern[str] | str | None] = []
        for segment in segments:
            if segment == "**":
                if not self._parts or self._parts[-1] is not None:
                    self._parts.append(None)  # `**/**` is one `**`
            elif any(c in segment for c in "*?["):
                self._parts.append(re.compile(fnmatch.translate(segment)))
            else:
                self._parts.append(segment)

    def _closure(self, states: set[int]) -> set[int]:
        for i in sorted(states):
            while i < len(self._parts) and self._parts[i] is None:
                i += 1
                states.add(i)
        return states

    def matches(self, names: Sequence[str]) -> bool:
        end = len(self._parts)
        states = self._closure({0})
        for name in names:
            following: set[int] = set()
            for i in states:
                if i == end:
                    continue
                part = self._parts[i]
                if part is None:
                    following.add(i)
                elif part == name if isinstance(part, str) else part.match(name):
                    following.add(i + 1)
            if not following:
                return False
            states = self._closure(following)
        return end in states


class GlobReader:
    """Reads `rg --files --null .` run in `root`; keeps the first `max_paths` paths that
    `pattern` matches (relative to `root`), made absolute, and counts them all."""

    def __init__(self, root: str, pattern: PathPattern, max_paths: int) -> None:
        self.pattern = pattern
        self.max_paths = max_paths
        self.paths: list[str] = []
        """The paths shown, in path order (set by `finish`)."""
        self._kept = _Smallest(max_paths)
        self.total = 0
        self.root = root
        self._split = _Lines(b"\0", PATH_BYTES)

    def feed(self, chunk: bytes) -> None:
        for path, whole in self._split.split(chunk):
            if whole:
                self._path(path)

    def finish(self) -> None:
        rest = self._split.rest()
        if rest is not None and rest[1]:
            self._path(rest[0])
        self.paths = self._kept.result()

    def _path(self, raw: bytes) -> None:
        if not raw.startswith(b"./"):
            return
        relative = raw[2:].decode("utf-8", errors="replace")
        names = relative.split("/")
        if self.pattern.matches(names):
            self.total += 1
            self._kept.offer((tuple(names), 0), os.path.join(self.root, relative))
