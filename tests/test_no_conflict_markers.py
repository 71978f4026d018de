"""No tracked text file keeps a merge's conflict markers.

Many branches land on main by merging it in; a conflict resolved in a hurry once left its markers in
an RFC, and neither the doc gates nor any test noticed, because Markdown renders them as text.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".json", ".jsonl", ".yml", ".yaml", ".cfg", ""}
# A marker is a whole line: seven of the same character, then for the outer two a space or the end.
MARKER = re.compile(r"^(<{7}|>{7})( |$)|^={7}$", re.MULTILINE)


def conflict_markers(root: Path, paths: list[str]) -> list[str]:
    """`path:line` of every conflict marker line in the given files."""
    found = []
    for name in paths:
        path = root / name
        if path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for match in MARKER.finditer(text):
            found.append(f"{name}:{text.count(chr(10), 0, match.start()) + 1}")
    return found


def tracked_files(root: Path) -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    return [name for name in listing.split("\0") if name]


def test_no_tracked_file_has_conflict_markers() -> None:
    assert conflict_markers(REPO, tracked_files(REPO)) == []


def test_markers_are_found_and_lookalikes_are_not(tmp_path: Path) -> None:
    (tmp_path / "rfc.md").write_text("# RFC\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\n")
    (tmp_path / "table.md").write_text("Title\n========\n`<<<<<<<<` inline\n")
    assert conflict_markers(tmp_path, ["rfc.md", "table.md"]) == [
        "rfc.md:2",
        "rfc.md:4",
        "rfc.md:6",
    ]
