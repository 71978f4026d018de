"""What `web_fetch` makes of a body (acp_server/tools/builtin/web_text.py): which media types
are HTML, text or binary, the charset a page declares early, and text decoded by its charset
as browsers read it, in steps a cancel stops; a charset that cannot be used (one browsers do
not read, such as `punycode`) said in one sentence and read as UTF-8. Through the tool and a
real HTTP server: tests/tools/builtin/test_web.py and tests/tools/builtin/test_web_hostile.py."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from acp_server.tools.builtin.web_text import content_class, decode, meta_charset

pytestmark = pytest.mark.anyio


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


async def test_text_is_decoded_by_its_charset_and_bad_bytes_are_replaced() -> None:
    assert await decode("café".encode("latin-1"), "ISO-8859-1") == ("café", None)
    assert await decode(b"caf\xe9", None) == ("caf\ufffd", None)  # UTF-8 when none is named


@pytest.mark.parametrize(
    ("data", "label", "text"),
    [
        (b"\x80 5", "latin1", "\u20ac 5"),  # latin1 is windows-1252 on the web
        (b"\x93\xfa\x96\x7b", " Shift_JIS ", "\u65e5\u672c"),  # labels are trimmed, any case
        (b"\xef\xbb\xbfcaf\xc3\xa9", "windows-1252", "café"),  # a byte order mark wins
        ("café".encode("utf-16-le"), "utf-16", "café"),  # utf-16 is little-endian
    ],
)
async def test_charsets_are_read_as_browsers_read_them(data: bytes, label: str, text: str) -> None:
    assert await decode(data, label) == (text, None)


@pytest.mark.parametrize(
    "charset", ["punycode", "rot13", "base64", "idna", "latin-1", "iso-2022-kr", "no-such-charset"]
)
async def test_a_charset_that_cannot_be_used_is_read_as_utf8_and_said(charset: str) -> None:
    text, problem = await decode("café".encode(), charset)
    assert text == "café"
    assert problem == (
        f"the page names the charset {charset!r}, which web_fetch cannot read text in, so it was"
        " read as UTF-8"
    )


async def test_a_cancel_stops_the_decoding_of_a_large_page_midway() -> None:
    """Decoding takes turns with the event loop, so a cancel (or the fetch's deadline) that
    comes while it runs ends it between two steps. 2 MiB of bytes windows-1250 leaves
    undefined are its slowest input (about 0.5 s decoded whole)."""
    decoded: list[str] = []

    async def cancel_midway(scope: anyio.CancelScope) -> None:
        for _ in range(8):  # the decoding has begun: it is past its first steps
            await anyio.lowlevel.checkpoint()
        scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(cancel_midway, group.cancel_scope)
        text, _ = await decode(b"\x81" * (2 << 20), "windows-1250")
        decoded.append(text)
    assert decoded == []
