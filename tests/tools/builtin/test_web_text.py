"""What `web_fetch` makes of a body (acp_server/tools/builtin/web_text.py): which media types
are HTML, text or binary, the charset a page declares early, and text decoded by its charset,
a charset that cannot be used said in one sentence and read as UTF-8. Through the tool and a
real HTTP server: tests/tools/builtin/test_web.py and tests/tools/builtin/test_web_hostile.py."""

from __future__ import annotations

import pytest

from acp_server.tools.builtin.web_text import content_class, decode, meta_charset


@pytest.mark.parametrize(
    ("mime", "kind"),
    [
        ("text/html", "html"),
        ("application/xhtml+xml", "html"),
        ("text/plain", "text"),
        ("text/csv", "text"),
        ("application/json", "text"),
        ("application/vnd.api+json", "text"),
        ("image/svg+xml", "text"),
        ("application/x-ndjson", "text"),
        ("application/pdf", None),
        ("image/png", None),
        ("application/octet-stream", None),
        ("", ""),
    ],
)
def test_media_types_are_html_text_or_binary(mime: str, kind: str | None) -> None:
    assert content_class(mime) == kind


def test_the_charset_a_page_declares_is_read_from_its_first_4_kib_only() -> None:
    assert meta_charset(b"<head><meta charset='ISO-8859-1'>") == "ISO-8859-1"
    assert meta_charset(
        b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
    ) == ("koi8-r")
    assert meta_charset(b"<p>no declaration</p>") is None
    assert meta_charset(b" " * 4096 + b"<meta charset=latin1>") is None


def test_text_is_decoded_by_its_charset_and_bad_bytes_are_replaced() -> None:
    assert decode("café".encode("latin-1"), "latin-1") == ("café", None)
    assert decode(b"caf\xe9", None) == ("caf\ufffd", None)  # UTF-8 when none is named


@pytest.mark.parametrize("charset", ["rot13", "base64", "idna", "no-such-charset"])
def test_a_charset_that_cannot_be_used_is_read_as_utf8_and_said(charset: str) -> None:
    text, problem = decode("café".encode(), charset)
    assert text == "café"
    assert problem == (
        f"the page names the charset {charset!r}, which web_fetch cannot read text in, so it was"
        " read as UTF-8"
    )
