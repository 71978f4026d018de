#!/usr/bin/env python3
"""Check that relative links in README.md and docs/**/*.md point at files that exist.

Covers inline links and images `[text](target)` and reference definitions `[label]: target`.
Links with a URL scheme (http:, https:, mailto:, ...) and pure `#anchor` links are skipped; a
`#fragment` or `?query` is stripped before the lookup, and a target starting with `/` is read
from the repository root. Fenced code blocks and inline code are examples, not links, so they
are ignored. A target that resolves outside the repository is reported too: it exists only on
the machine that wrote it.

Prints one `path:line: broken link <target>` per violation and exits 1, or a one-line summary
and exits 0.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

from markdown_fences import outside_fences, without_inline_code

INLINE_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\"|\s+'[^']*')?\s*\)")
REFERENCE_DEFINITION = re.compile(r" {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

Violation = tuple[str, int, str]


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """Yield (line number, line without inline code) for lines outside fenced code blocks."""
    for number, line in outside_fences(text):
        yield number, without_inline_code(line)


def link_targets(text: str) -> Iterator[tuple[int, str]]:
    """Yield (line, target) for every link that should name a file in the repository."""
    for number, line in prose_lines(text):
        targets = [m.group(1) for m in INLINE_LINK.finditer(line)]
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            targets.append(definition.group(1))
        for target in targets:
            if URL_SCHEME.match(target) or target.startswith("#"):
                continue
            yield number, target


def markdown_files(root: Path) -> list[Path]:
    """The top-level README.md and every Markdown file under docs/."""
    files = [root / "README.md"] if (root / "README.md").is_file() else []
    docs = root / "docs"
    if docs.is_dir():
        files += sorted(p for p in docs.rglob("*.md") if p.is_file())
    return files


def verify(root: Path) -> tuple[list[Violation], int, int]:
    """Return violations, the number of links checked and the number of files read."""
    found: list[Violation] = []
    checked = 0
    files = markdown_files(root)
    for path in files:
        rel = path.relative_to(root).as_posix()
        for line, target in link_targets(path.read_text(encoding="utf-8")):
            checked += 1
            local = unquote(target.split("#", 1)[0].split("?", 1)[0])
            base = root if local.startswith("/") else path.parent
            resolved = (base / local.lstrip("/")).resolve()
            if not resolved.is_relative_to(root):
                found.append((rel, line, f"broken link {target} (outside the repository)"))
            elif not resolved.exists():
                found.append((rel, line, f"broken link {target}"))
    return found, checked, len(files)


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
    print(f"OK: {checked} relative links in {files} Markdown files resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
