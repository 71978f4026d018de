"""Text from elsewhere (a repository, a command, the model) made safe to show to a human.

A terminal or an editor interprets some characters instead of showing them: ESC starts a
control sequence (`ESC ] 52` writes the clipboard, `ESC [ 2 J` clears the screen), a carriage
return overwrites what was shown, C1 controls do the same in 8-bit form, and the bidirectional
overrides (`U+202E`, Trojan Source) make text read differently from what it is. Each of them is
shown as its escape (`\\x1b`, `\\u202e`) instead, so what the user reads is what is there.

`one_line` is for titles, names and paths: line breaks and tabs are escaped too, so a name
cannot start a line of its own. `printable` is for output: it keeps newlines and tabs.
"""

from __future__ import annotations

import re

_BIDI_AND_SEPARATORS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_UNSAFE_IN_OUTPUT = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI_AND_SEPARATORS}]")
_UNSAFE_ON_ONE_LINE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI_AND_SEPARATORS}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """`text` with control, line-break and bidirectional characters escaped."""
    return _UNSAFE_ON_ONE_LINE.sub(_escape, text)


def printable(text: str) -> str:
    """`text` with control and bidirectional characters escaped; newlines and tabs kept (a
    `\\r\\n` line end reads as `\\n`)."""
    return _UNSAFE_IN_OUTPUT.sub(_escape, text.replace("\r\n", "\n"))
