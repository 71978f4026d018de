"""`one_line` and `printable`: terminal escapes, C1 controls and bidi overrides are shown as
escapes; ordinary text (accents, emoji, CJK) is left alone."""

from __future__ import annotations

import pytest

from acp_server.printable import one_line, printable


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),  # OSC 52: a clipboard write
        ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear the screen
        ("abc\rXYZ", "abc\\x0dXYZ"),  # overwrite what was shown
        ("\x9b2J", "\\x9b2J"),  # a C1 control sequence introducer
        ("a\u202egnp.exe", "a\\u202egnp.exe"),  # Trojan Source
        ("\u2066x\u2069 \u200f", "\\u2066x\\u2069 \\u200f"),
        ("lines\nand\ttabs\r\n", "lines\nand\ttabs\n"),
        ("café ✓ 日本 👩\u200d💻", "café ✓ 日本 👩\u200d💻"),
    ],
)
def test_printable_escapes_what_a_terminal_would_interpret(text: str, expected: str) -> None:
    assert printable(text) == expected


def test_one_line_escapes_line_breaks_and_tabs_too() -> None:
    assert one_line("a\nb\tc\u2028d\x1b") == "a\\x0ab\\x09c\\u2028d\\x1b"
    assert one_line("plain `make check` — ok") == "plain `make check` — ok"
