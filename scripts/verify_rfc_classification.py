#!/usr/bin/env python3
"""Check that every RFC under docs/rfc is filed, shaped and indexed by lifecycle and class.

The folder is the label: docs/rfc/<lifecycle>/<class>/yyyy-mm-dd-topic.md. A parsed field could
hold any spelling; a folder name checked against a closed set cannot drift. This gate also keeps
the hand-written index in docs/rfc/README.md in step with the files, because moving an RFC
between lifecycles is three edits (the folder, the Status line, the index entry) and forgetting
any one of them is the usual way the index starts to lie.

Prints one `path:line: message` per violation and exits 1, or prints a one-line summary and
exits 0. Standard library only, so it runs before any environment is set up.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path
from urllib.parse import unquote

from markdown_fences import outside_fences, without_inline_code

LIFECYCLES = ("proposed", "implemented", "rejected")
CLASSES = ("feature", "bug-fix", "simplification", "architecture", "process", "testing")
# Each inner tuple is one required section; any one of its spellings satisfies it.
REQUIRED_SECTIONS = (
    ("Problem",),
    ("Decision", "Proposal"),
    ("Alternatives considered",),
    ("Consequences",),
    ("Verification",),
)

FILE_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})-[a-z0-9]+(?:-[a-z0-9]+)*\.md")
TITLE = re.compile(r"# RFC: \S")
STATUS = re.compile(r"Status:\s*(.*?)\s*$")
# An index entry is a list item whose first element is a link: `- [title](target)`.
INDEX_ENTRY = re.compile(r"\s*[-*+]\s+\[[^\]]*\]\(\s*<?([^)\s>]+)>?[^)]*\)")
URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

Violation = tuple[str, int, str]


def check_location(rel: str, parts: tuple[str, ...]) -> tuple[list[Violation], str | None, bool]:
    """Check the folder and file name; return violations, the lifecycle and whether it is indexable.

    An RFC is indexable when its lifecycle and class folders are valid: only then is there a
    heading it could be listed under, so only then is a missing index entry worth reporting.
    """
    if len(parts) != 3:
        message = "an RFC lives at docs/rfc/<lifecycle>/<class>/yyyy-mm-dd-topic.md"
        return [(rel, 1, message)], None, False
    lifecycle, klass, name = parts
    found: list[Violation] = []
    if lifecycle not in LIFECYCLES:
        expected = ", ".join(LIFECYCLES)
        found.append((rel, 1, f"unknown lifecycle folder '{lifecycle}' (one of: {expected})"))
    if klass not in CLASSES:
        expected = ", ".join(CLASSES)
        found.append((rel, 1, f"unknown class folder '{klass}' (one of: {expected})"))
    match = FILE_NAME.fullmatch(name)
    if match is None:
        found.append(
            (rel, 1, "file name must be yyyy-mm-dd-topic.md (topic: lowercase words and hyphens)")
        )
    else:
        try:
            datetime.date.fromisoformat(match.group(1))
        except ValueError:
            found.append((rel, 1, f"file name starts with an invalid date '{match.group(1)}'"))
    valid_lifecycle = lifecycle if lifecycle in LIFECYCLES else None
    return found, valid_lifecycle, valid_lifecycle is not None and klass in CLASSES


def check_content(rel: str, text: str, lifecycle: str | None) -> list[Violation]:
    """Check the title line, the Status line and the required sections of one RFC."""
    found: list[Violation] = []
    lines = text.splitlines()
    if not lines or not TITLE.match(lines[0]):
        found.append((rel, 1, "first line must be the title: '# RFC: <title>'"))

    status: tuple[int, str] | None = None
    headings: set[str] = set()
    for number, line in outside_fences(text):
        if line.startswith("## "):
            headings.add(line[3:].strip())
        elif status is None and not headings:
            match = STATUS.match(line)
            if match:
                status = (number, match.group(1))

    if status is None:
        found.append((rel, 2, "missing 'Status: <lifecycle>' line before the first section"))
    elif lifecycle is not None and status[1] != lifecycle:
        found.append(
            (rel, status[0], f"Status '{status[1]}' does not match its folder '{lifecycle}'")
        )
    elif status[1] not in LIFECYCLES:
        found.append((rel, status[0], f"Status '{status[1]}' is not a lifecycle"))

    for spellings in REQUIRED_SECTIONS:
        if not headings.intersection(spellings):
            wanted = " or ".join(f"'## {name}'" for name in spellings)
            found.append((rel, 1, f"missing section {wanted}"))
    return found


def check_index(root: Path, rfc_dir: Path, indexable: dict[Path, str]) -> list[Violation]:
    """Check the README index against the RFC files found on disk."""
    readme = rfc_dir / "README.md"
    readme_rel = readme.relative_to(root).as_posix()
    if not readme.is_file():
        return [(readme_rel, 1, "missing: the RFC index lives here")]

    found: list[Violation] = []
    listed: dict[Path, list[int]] = {}
    lifecycle: str | None = None
    klass: str | None = None
    for number, line in outside_fences(readme.read_text(encoding="utf-8")):
        if line.startswith("# "):
            lifecycle = klass = None
            continue
        if line.startswith("## "):
            name = line[3:].strip()
            lifecycle = name.lower() if name.lower() in LIFECYCLES else None
            klass = None
            if lifecycle is not None and name != lifecycle.capitalize():
                found.append(
                    (readme_rel, number, f"write the heading as '## {lifecycle.capitalize()}'")
                )
            continue
        if line.startswith("### "):
            name = line[4:].strip()
            klass = name if name in CLASSES else None
            if lifecycle is not None and klass is None:
                expected = ", ".join(CLASSES)
                found.append(
                    (readme_rel, number, f"unknown class heading '### {name}' (one of: {expected})")
                )
            continue
        if lifecycle is None:
            continue
        entry = INDEX_ENTRY.match(without_inline_code(line))
        if entry is None:
            continue
        target = entry.group(1)
        if URL_SCHEME.match(target) or target.startswith("#"):
            continue
        if klass is None:
            found.append((readme_rel, number, f"index entry {target} is not under a ### class"))
            continue
        resolved = (rfc_dir / unquote(target.split("#", 1)[0])).resolve()
        if not resolved.is_file():
            found.append((readme_rel, number, f"dangling index link {target}"))
            continue
        if resolved.parent != (rfc_dir / lifecycle / klass).resolve():
            heading = f"'## {lifecycle.capitalize()}' / '### {klass}'"
            message = f"{target} is listed under {heading} but is not in that folder"
            found.append((readme_rel, number, message))
        listed.setdefault(resolved, []).append(number)

    for path, lines in listed.items():
        for extra in lines[1:]:
            rel = path.relative_to(rfc_dir).as_posix()
            found.append((readme_rel, extra, f"{rel} is listed again (first at line {lines[0]})"))
    for path, lifecycle_name in indexable.items():
        if path.resolve() not in listed:
            rel = path.relative_to(root).as_posix()
            klass_name = path.parent.name
            heading = f"'## {lifecycle_name.capitalize()}' / '### {klass_name}'"
            found.append((rel, 1, f"not listed in {readme_rel} (expected under {heading})"))
    return found


def verify(root: Path) -> tuple[list[Violation], int]:
    """Return every violation under root and the number of RFC files checked."""
    rfc_dir = root / "docs" / "rfc"
    if not rfc_dir.is_dir():
        return [("docs/rfc", 1, "missing: the RFC folder does not exist")], 0
    found: list[Violation] = []
    indexable: dict[Path, str] = {}
    rfcs = sorted(p for p in rfc_dir.rglob("*.md") if p != rfc_dir / "README.md")
    for path in rfcs:
        rel = path.relative_to(root).as_posix()
        location, lifecycle, can_index = check_location(rel, path.relative_to(rfc_dir).parts)
        found += location
        found += check_content(rel, path.read_text(encoding="utf-8"), lifecycle)
        if can_index and lifecycle is not None:
            indexable[path] = lifecycle
    found += check_index(root, rfc_dir, indexable)
    return found, len(rfcs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="repository root to check (default: the one holding this script)",
    )
    root = parser.parse_args().root.resolve()
    found, count = verify(root)
    for path, line, message in sorted(set(found)):
        print(f"{path}:{line}: {message}")
    if found:
        return 1
    print(f"OK: {count} RFCs filed by lifecycle and class, each indexed once in docs/rfc/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
