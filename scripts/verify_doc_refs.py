#!/usr/bin/env python3
"""Check that every docs/<path>.md cited in Python comments and strings exists.

Code points readers at design notes ("see docs/rfc/...") and those notes move when their
lifecycle changes. A Markdown link checker never reads .py files, so a moved note silently
orphans every comment that cites it; this gate closes that gap. Only comment and string tokens
are searched (via tokenize), so an identifier can never be mistaken for a path.

Scanned: *.py under every top-level directory that is not hidden (so every shipped package,
acp_fixture/ included, is covered the day it appears), extension-less files under scripts/
whose first line is a python shebang, every line of every file under examples/ (fixtures
cite their format in `#` comment lines), and the prose of every Markdown file (README.md,
docs/, ...) outside its fenced code blocks (`markdown_fences.py`, the parser the other two
gates use): a note that names another by path breaks when that one moves, like a comment.
Test fixture data (tests/**/fixtures/**, tests/data/**) is skipped so deliberately broken
fixtures cannot fail the real tree.

Prints one `path:line: missing docs/<path>.md` per violation and exits 1, or a one-line summary
and exits 0.
"""

from __future__ import annotations

import argparse
import re
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

from markdown_fences import outside_fences

TEXT_DIRS = ("examples",)
"""Scanned line by line, whatever the file type: their files are data with comments."""
# The path must start at a word boundary: `../docs/x.md` or `mydocs/x.md` are not repo-root refs.
DOC_REF = re.compile(r"(?<![\w./-])docs/[\w./-]*\.md(?![\w/-])")
# f-strings are single STRING tokens before Python 3.12 and split into parts from 3.12 on.
_SPLIT_STRING_PARTS = ("FSTRING_MIDDLE", "TSTRING_MIDDLE")
TEXT_TOKENS = frozenset(
    {tokenize.COMMENT, tokenize.STRING}
    | {getattr(tokenize, name) for name in _SPLIT_STRING_PARTS if hasattr(tokenize, name)}
)

Violation = tuple[str, int, str]


def is_fixture(rel: Path) -> bool:
    """Whether a repo-relative path is test fixture data rather than code."""
    parts = rel.parts
    if parts[0] != "tests":
        return False
    return parts[1:2] == ("data",) or "fixtures" in parts[1:-1]


def has_python_shebang(path: Path) -> bool:
    """Whether the file's first line is a shebang that runs python."""
    with path.open("rb") as stream:
        first = stream.readline(200)
    return first.startswith(b"#!") and b"python" in first


def top_dirs(root: Path) -> list[Path]:
    """Every top-level directory that is not hidden (no .venv, .git or tool caches)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def sources(root: Path) -> Iterator[Path]:
    """Yield every file the gate covers, in a stable order."""
    yield from sorted(root.glob("*.md"))
    for base in top_dirs(root):
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(root)
            if not path.is_file() or is_fixture(rel) or "__pycache__" in rel.parts:
                continue
            script = base.name == "scripts" and not path.suffix and has_python_shebang(path)
            if path.suffix in (".py", ".md") or script or base.name in TEXT_DIRS:
                yield path


def references(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (line, docs path) for every docs reference in a comment or string token (Python),
    or anywhere in a line (the data files of TEXT_DIRS), or outside fenced code (Markdown)."""
    if path.suffix == ".md":
        for number, text_line in outside_fences(path.read_text(encoding="utf-8", errors="replace")):
            for match in DOC_REF.finditer(text_line):
                yield number, match.group(0)
        return
    if path.suffix != ".py" and not has_python_shebang(path):
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, text_line in enumerate(text.splitlines(), start=1):
            for match in DOC_REF.finditer(text_line):
                yield number, match.group(0)
        return
    with path.open("rb") as stream:
        tokens = list(tokenize.tokenize(stream.readline))
    for token in tokens:
        if token.type not in TEXT_TOKENS:
            continue
        for match in DOC_REF.finditer(token.string):
            # A reference inside a multi-line string is reported on its own line.
            line = token.start[0] + token.string.count("\n", 0, match.start())
            yield line, match.group(0)


def verify(root: Path) -> tuple[list[Violation], int, int]:
    """Return violations, the number of references checked and the number of files scanned."""
    found: list[Violation] = []
    checked = 0
    files = 0
    for path in sources(root):
        files += 1
        rel = path.relative_to(root).as_posix()
        try:
            refs = sorted(set(references(path)))
        except (tokenize.TokenError, SyntaxError) as error:
            found.append((rel, 1, f"cannot tokenize: {error}"))
            continue
        for line, ref in refs:
            checked += 1
            if not (root / ref).is_file():
                found.append((rel, line, f"missing {ref}"))
    return found, checked, files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="repository root to check (default: the one holding this script)",
    )
    root = parser.parse_args().root.resolve()
    found, checked, files = verify(root)
    for path, line, message in found:
        print(f"{path}:{line}: {message}")
    if found:
        return 1
    print(f"OK: {checked} docs references in {files} files resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
