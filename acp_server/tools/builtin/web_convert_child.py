"""The HTML conversion of `web_fetch`, run in a child process of its own (started by
`web_convert.py`), so that the agent can stop it and its memory is not the agent's.

`python -P web_convert_child.py MODE OUTPUT_LIMIT MEMORY_LIMIT CPU_SECONDS`, the page on stdin as
UTF-8:

- MODE `markdown`: html-to-markdown (ATX headings, `-` bullets, no front matter; scripts,
  styles, `<noscript>` and `<template>` dropped). A page it gives nothing for while the page
  has text (nesting past the converter's depth limit) gives its text instead, saying so.
- MODE `text`: the text alone, taken by the standard library's `html.parser` (no recursion,
  time and output linear in the page): what is left when the converter failed.

stdout gets at most OUTPUT_LIMIT + 1 bytes of UTF-8 (one more than the limit says that there
was more). Before reading, the address space is capped at MEMORY_LIMIT bytes, the processor
time at CPU_SECONDS, and core dumps are turned off: past the memory cap the converter's
allocator aborts the process (SIGABRT) or Python raises MemoryError, past the time the kernel
ends it (SIGXCPU), and the parent sees a failed run. The parent stops a pass by its own clock
first; the time cap holds where that clock is gone (an agent killed outright, whose watchdog was
killed too).

Imports nothing of the project (it starts in about 50 ms). See
docs/rfc/implemented/feature/2026-12-01-web-fetch.md.
"""

from __future__ import annotations

import re
import resource
import sys
from html.parser import HTMLParser

_BLANK_LINES = re.compile(r"\n{3,}")
_TAG = re.compile(r"<[^>]*>")
_SKIPPED = ("script", "style", "noscript", "template")
TOO_DEEP = "[the page nests too deeply to convert to Markdown; its text follows]"


def html_to_markdown(text: str) -> str:
    """The Markdown of an HTML document; its text when the converter gives nothing."""
    import html_to_markdown as converter

    options = converter.ConversionOptions(extract_metadata=False, heading_style="atx", bullets="-")
    try:
        markdown = converter.convert(text, options).content or ""
    except Exception:  # the converter's own errors (hostile input): the text still counts
        markdown = ""
    if not markdown.strip() and _has_text(text):
        markdown = f"{TOO_DEEP}\n\n{plain_text(text)}"
    return _BLANK_LINES.sub("\n\n", markdown).strip()


def _has_text(text: str) -> bool:
    return bool(_TAG.sub("", text[:65536]).strip())


class _TextOnly(HTMLParser):
    """Collects the text of a document, without scripts and styles (no recursion)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.parts.append(data.strip())


def plain_text(text: str) -> str:
    """The text of an HTML document, one line per run of text."""
    parser = _TextOnly()
    parser.feed(text)
    parser.close()
    return "\n".join(parser.parts)


def cap_resources(memory: int, cpu_seconds: int) -> None:
    """No core dumps, at most `memory` bytes of address space and `cpu_seconds` of processor
    time (then SIGXCPU; SIGKILL a second later), within the limits this process has."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for kind, soft, hard in (
        (resource.RLIMIT_AS, memory, memory),
        (resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
    ):
        _, ceiling = resource.getrlimit(kind)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(kind, (soft, hard))


def main(argv: list[str]) -> int:
    """Convert stdin to stdout as MODE says; 2 for wrong arguments."""
    if len(argv) != 5 or argv[1] not in ("markdown", "text"):
        sys.stderr.write(f"usage: {argv[0]} markdown|text OUTPUT_LIMIT MEMORY_LIMIT CPU_SECONDS\n")
        return 2
    mode, output_limit = argv[1], int(argv[2])
    cap_resources(int(argv[3]), int(argv[4]))
    page = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    result = html_to_markdown(page) if mode == "markdown" else plain_text(page)
    sys.stdout.buffer.write(result.encode("utf-8")[: output_limit + 1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
