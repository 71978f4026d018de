"""The one fenced-code-block reader of the documentation gates (`verify_rfc_classification.py`,
`verify_md_links.py`, `verify_doc_refs.py`): what is inside a fence is an example, not prose,
so no gate reads a heading, a link or a path there.

CommonMark's rule, as far as the gates need it: a fence opens with three or more backticks or
tildes after at most three spaces, and closes with a run of the same character at least as
long, alone on its line; an unclosed fence runs to the end of the file. Standard library only,
like the gates, which import it from their own directory (running a script puts `scripts/`
first on `sys.path`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})\s*$")
INLINE_CODE = re.compile(r"(`+).+?\1")


def outside_fences(text: str) -> Iterator[tuple[int, str]]:
    """Yield (line number, line) for every line that is not part of a fenced code block (the
    fence lines themselves included)."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if fence is None:
            opening = FENCE_OPEN.match(line)
            if opening:
                fence = opening.group(1)
            else:
                yield number, line
            continue
        closing = FENCE_CLOSE.match(line)
        if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
            fence = None


def without_inline_code(line: str) -> str:
    """The line with its inline code spans (`...`) removed."""
    return INLINE_CODE.sub("", line)
