"""What `web_fetch` makes of a response body: which content types are text, and text decoded by
its charset, as browsers read charsets (HTML is then converted in a child process:
web_convert.py).
See docs/rfc/implemented/feature/2026-12-01-web-fetch.md."""

from __future__ import annotations

import re
from typing import NamedTuple

import anyio.lowlevel
import webencodings

_HTML = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_APPLICATIONS = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
        "application/x-ndjson",
        "application/rss+xml",
        "application/atom+xml",
    }
)


def content_class(mime: str) -> str | None:
    """`html`, `text`, or None (binary) for a media type; `""` when there is none."""
    if not mime:
        return ""
    if mime in _HTML:
        return "html"
    if mime.startswith("text/") or mime in _TEXT_APPLICATIONS:
        return "text"
    if mime.endswith(("+json", "+xml")):
        return "text"
    return None


_META_CHARSET = re.compile(
    rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9._:-]{1,40})""", re.I
)


def meta_charset(data: bytes) -> str | None:
    """The charset a page declares in its first 4 KiB (`<meta charset=...>`), if any."""
    match = _META_CHARSET.search(data[:4096])
    return match[1].decode("ascii") if match else None


_DECODE_STEP = 16 * 1024
"""Bytes decoded between two checkpoints: the slowest accepted codec (a single-byte one whose
every byte is undefined, each replaced through Python's error handler) takes about 10 ms for
this much on a shared machine, so a cancel or the fetch's deadline is never held longer."""


class Decoded(NamedTuple):
    text: str
    problem: str | None
    """One plain sentence (no final stop) when the named charset could not be used (the text
    is then UTF-8)."""


def web_encoding(label: str) -> webencodings.Encoding | None:
    """The encoding a browser reads for `label` (the WHATWG Encoding Standard's labels), or
    None when browsers read no text in it: an unknown label, or one of the `replacement`
    labels (`iso-2022-kr`, `hz-gb-2312`, ...)."""
    encoding = webencodings.lookup(label)
    if encoding is None or encoding.name == "replacement":
        return None
    return encoding


async def decode(data: bytes, label: str | None) -> Decoded:
    """`data` as text in the encoding `label` names (UTF-8 when none is named), as a browser
    reads it: a byte order mark wins over the label, undecodable bytes are replaced. A label
    browsers do not read text in (`punycode`, `rot13`, `idna`, an unknown name) is read as
    UTF-8 and said in `problem`. Decoded in steps with a checkpoint between them, so that a
    cancel or the fetch's deadline stops it."""
    problem = None
    encoding = web_encoding(label) if label else None
    if label and encoding is None:
        problem = (
            f"the page names the charset {label[:40]!r}, which web_fetch cannot read text in, "
            "so it was read as UTF-8"
        )
    decoder = webencodings.IncrementalDecoder(encoding or webencodings.UTF8, errors="replace")
    parts = []
    for start in range(0, len(data), _DECODE_STEP):
        parts.append(decoder.decode(data[start : start + _DECODE_STEP]))
        await anyio.lowlevel.checkpoint()
    parts.append(decoder.decode(b"", final=True))
    return Decoded("".join(parts), problem)
