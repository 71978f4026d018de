"""What `web_fetch` makes of a response body: which content types are text, HTML converted to
Markdown (html-to-markdown, imported on first use), and text decoded by its charset.
See docs/rfc/implemented/feature/2026-12-01-web-fetch.md."""

from __future__ import annotations

import re
from html.parser import HTMLParser
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
_BLANK_LINES = re.compile(r"\n{3,}")


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


def html_to_markdown(text: str) -> str:
    """The Markdown of an HTML document (run in a worker thread; the converter is native code
    that lets the event loop run meanwhile)."""
    import html_to_markdown as converter

    options = converter.ConversionOptions(extract_metadata=False, heading_style="atx", bullets="-")
    try:
        markdown = converter.convert(text, options).content or ""
    except Exception:  # the converter's own errors (hostile input): the text still counts
        markdown = ""
    if not markdown.strip() and _has_text(text):
        # Hostile nesting (the converter gives up past its depth limit) or a conversion
        # error: the text is still worth having.
        markdown = (
            "[the page nests too deeply to convert to Markdown; its text follows]\n\n"
            + _plain_text(text)
        )
    return _BLANK_LINES.sub("\n\n", markdown).strip()


_META_CHARSET = re.compile(
    rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9._:-]{1,40})""", re.I
)
_TAG = re.compile(r"<[^>]*>")


def meta_charset(data: bytes) -> str | None:
    """The charset a page declares in its first 4 KiB (`<meta charset=...>`), if any."""
    match = _META_CHARSET.search(data[:4096])
    return match[1].decode("ascii") if match else None


def _has_text(text: str) -> bool:
    return bool(_TAG.sub("", text[:65536]).strip())


class _TextOnly(HTMLParser):
    """Collects the text of a document, without scripts and styles (no recursion)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "noscript", "template"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "noscript", "template") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.parts.append(data.strip())


def _plain_text(text: str) -> str:
    parser = _TextOnly()
    parser.feed(text)
    parser.close()
    return "\n".join(parser.parts)


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
