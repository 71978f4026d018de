"""What `web_fetch` makes of a response body: which content types are text, and text decoded by
its charset (HTML is then converted in a child process: web_convert.py).
See docs/rfc/implemented/feature/2026-12-01-web-fetch.md."""

from __future__ import annotations

import re
from typing import NamedTuple

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


class Decoded(NamedTuple):
    text: str
    problem: str | None
    """One plain sentence (no final stop) when the named charset could not be used (the text
    is then UTF-8)."""


def decode(data: bytes, encoding: str | None) -> Decoded:
    """`data` as text in `encoding` (UTF-8 when none is named), undecodable bytes replaced. A
    charset Python does not know, or one that is not a text encoding (`rot13`, `base64`), or
    one that cannot replace bad bytes (`idna`), is read as UTF-8 and said in `problem`."""
    if encoding:
        try:
            return Decoded(data.decode(encoding, errors="replace"), None)
        except (LookupError, UnicodeError, ValueError):
            shown = encoding[:40]
            problem = (
                f"the page names the charset {shown!r}, which web_fetch cannot read text in, "
                "so it was read as UTF-8"
            )
            return Decoded(data.decode("utf-8", errors="replace"), problem)
    return Decoded(data.decode("utf-8", errors="replace"), None)
