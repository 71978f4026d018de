"""The start of a tool call the model is writing as text, seen while the message streams.

`text_calls.py` decides at the message's end whether the message *is* calls. So that the
client sees such a call as soon as its name is written (a small local model writes 4-20
tokens a second: the end of the message comes seconds later), `CallStart` watches the text as
it streams and says when it begins like one: after optional whitespace, a `{`, a fence
(```` ``` ```` or ```` ```json ````, the rest of its line, then `{`) or `<tool_call>` then `{`,
and in that first object a complete `"name"` member naming an offered tool. Then the loop
announces the call (see docs/rfc/implemented/feature/2026-12-01-text-tool-calls.md); whether it
runs is still decided at the end.

Each character is looked at once, in the chunk that brought it: the watcher keeps its state
between chunks and stops looking as soon as the text cannot be such a call (prose first, a
key `text_calls.py` would refuse, an unknown tool) or once the first object has closed. (A
partial JSON parser would re-parse the whole text at every chunk: measured against this
scanner and turned down in the RFC, `uv run benchmarks text-call-start`.)

`arguments()` gives what is known of the arguments object so far as an object: its complete
members (those followed by a `,` or the closing `}`), parsed; None when even that does not
parse, or when the arguments are not an object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["CallStart"]

_STRING_STOP = re.compile(r'["\\]')
_TAG = "<tool_call>"
_KEYS = frozenset({"name", "arguments", "parameters"})
_MAX_KEY = 64
"""Longer key or name strings: no call (no tool or allowed key is that long)."""
_MAX_LANG = 32
"""Longer fence info strings: not watched (the end-of-message check still sees them)."""


def _fence_tag(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char in "_-")


class CallStart:
    """Watches one streaming message (`feed` each text chunk). `name` is set once the text
    begins like a call of an offered tool; `watching` is False once nothing more can change."""

    def __init__(self, offered: Mapping[str, object]) -> None:
        self._offered = offered
        self.name: str | None = None
        self.watching = True
        self.examined = 0
        """Characters looked at so far (each at most once)."""
        self._lead = "space"  # space, ticks, lang, eol, blank, tag: before the first `{`
        # ("object" once it has begun)
        self._count = 0  # backticks, info-string characters or tag characters so far
        self._chunks: list[str] = []  # the text from the first `{` on
        self._size = 0
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._string: list[str] | None = None  # a depth-1 string being collected
        self._string_size = 0
        self._at_key = False  # the next depth-1 string is a key
        self._key: str | None = None
        self._value_next = False  # the next depth-1 token starts the value of `_key`
        self._args_start: int | None = None
        self._args_mark: int | None = None  # the `,` after the last complete member
        self._args_end: int | None = None
        self._known: tuple[tuple[int | None, int | None], dict[str, Any] | None] | None = None

    def feed(self, chunk: str) -> None:
        """Look at the next piece of the message."""
        at = 0
        while self.watching and self._lead != "object" and at < len(chunk):
            at = self._lead_char(chunk, at)
        if self.watching and self._lead == "object" and at < len(chunk):
            self._scan(chunk[at:])

    def _stop(self) -> None:
        self.watching = False
        self._chunks = []
        self._string = None

    def _lead_char(self, chunk: str, at: int) -> int:
        """Read one character before the first `{`; the index after it."""
        char = chunk[at]
        state = self._lead
        if char == "{" and state in ("space", "blank"):
            self._lead = "object"
            return at  # the object starts here: `_scan` reads it
        self.examined += 1
        if state in ("space", "blank") and char.isspace():
            pass
        elif state == "space" and char in "`<":
            self._lead, self._count = ("ticks", 1) if char == "`" else ("tag", 1)
        elif state == "ticks" and char == "`":
            self._count += 1
            if self._count == 3:
                self._lead, self._count = "lang", 0
        elif state == "lang" and _fence_tag(char) and self._count < _MAX_LANG:
            self._count += 1
        elif state in ("lang", "eol") and char in " \t":
            self._lead = "eol"
        elif state in ("lang", "eol") and char == "\n":
            self._lead = "blank"
        elif state == "tag" and char == _TAG[self._count]:
            self._count += 1
            if self._count == len(_TAG):
                self._lead = "blank"
        else:
            self._stop()
        return at + 1

    def _scan(self, text: str) -> None:
        """Read `text`, which is part of the first object (or follows it)."""
        base = self._size
        self._chunks.append(text)
        self._size += len(text)
        at = 0
        while at < len(text) and self.watching:
            if self._in_string:
                at = self._string_part(text, at)
                continue
            self.examined += 1
            self._structure(text[at], base + at)
            at += 1
            if self._depth == 0:  # the first object has closed: nothing more to learn
                self.watching = False
                if self.name is None:
                    self._stop()

    def _string_part(self, text: str, at: int) -> int:
        """Read string content from `at`; the index after what was read."""
        if self._escaped:
            self._escaped = False
            self._collect(text[at])
            self.examined += 1
            return at + 1
        found = _STRING_STOP.search(text, at)
        end = len(text) if found is None else found.start()
        self._collect(text[at:end])
        self.examined += end - at
        if found is None:
            return end
        self.examined += 1
        if text[end] == "\\":
            self._escaped = True
            self._collect("\\")
            return end + 1
        self._in_string = False
        self._string_ended()
        return end + 1

    def _collect(self, piece: str) -> None:
        if self._string is None or not piece:
            return
        self._string_size += len(piece)
        if self._string_size > _MAX_KEY:
            self._stop()
            return
        self._string.append(piece)

    def _string_ended(self) -> None:
        if self._string is None:
            return
        try:
            value = json.loads('"' + "".join(self._string) + '"')
        except ValueError:
            self._stop()
            return
        self._string = None
        if self._at_key:
            self._key, self._at_key = value, False
            if value not in _KEYS:
                self._stop()
        elif value in self._offered:
            self.name = value
        else:
            self._stop()

    def _structure(self, char: str, offset: int) -> None:
        """One character outside strings, at `offset` of the object's text."""
        if char.isspace():
            return
        if self._value_next and self._depth == 1:
            self._value_next = False
            self._value_starts(char, offset)
            if not self.watching:
                return
        if char == '"':
            self._in_string = True
            if self._depth == 1 and (self._at_key or self._key == "name"):
                self._string, self._string_size = [], 0
        elif char in "{[":
            self._depth += 1
            if self._depth == 1:
                self._at_key = True
        elif char in "}]":
            self._depth -= 1
            if self._depth == 1 and self._args_start is not None and self._args_end is None:
                self._args_end = offset
        elif char == ":" and self._depth == 1:
            self._value_next = True
        elif char == "," and self._depth == 1:
            self._at_key = True
        elif char == "," and self._depth == 2 and self._args_end is None:
            self._args_mark = offset

    def _value_starts(self, char: str, offset: int) -> None:
        """The first character of the value of the depth-1 member `_key`."""
        if self._key == "name":
            if char != '"':
                self._stop()
        elif char == "{":
            if self._args_start is None:
                self._args_start = offset
        elif char != '"':  # arguments as a JSON string are accepted; anything else is not
            self._stop()

    def arguments(self) -> dict[str, Any] | None:
        """The complete members of the arguments object so far (see the module docstring)."""
        start = self._args_start
        if start is None or not self._chunks:
            return None
        state = (self._args_mark, self._args_end)
        if self._known is not None and self._known[0] == state:
            return self._known[1]
        text = "".join(self._chunks)
        self._chunks = [text]
        if self._args_end is not None:
            candidate = text[start : self._args_end + 1]
        elif self._args_mark is not None:
            candidate = text[start : self._args_mark] + "}"
        else:
            candidate = "{}"
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            value = None
        known = value if isinstance(value, dict) else None
        self._known = (state, known)
        return known
