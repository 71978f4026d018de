"""Where a file the model named but that does not exist probably is: the files of the same
name in the workspace ("no src/users.py; users.py exists"). A small model once made the right
edit on a made-up path; the answer that names the real one lets it retry at once.

The search is bounded work on a repository nobody vetted: at most `MAX_ENTRIES` directory
entries in all, links never followed, the usual bulky directories (`.git`, `node_modules`,
virtual environments, caches) skipped, at most `MAX_FOUND` names shown. The file tools run it
in a worker thread.
"""

from __future__ import annotations

import os

__all__ = ["MAX_ENTRIES", "MAX_FOUND", "near_paths", "near_paths_note"]

MAX_ENTRIES = 20_000
MAX_FOUND = 5
_SKIPPED = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox", "target", "dist", "build"}
)  # fmt: skip


def near_paths(cwd: str, missing: str) -> list[str]:
    """The files under `cwd` named like `missing` (its last component), relative to `cwd`,
    nearest first (fewest directories deep), at most `MAX_FOUND`."""
    name = os.path.basename(missing)
    if not name:
        return []
    found: list[str] = []
    seen = 0
    pending = [cwd]
    while pending and seen < MAX_ENTRIES:  # breadth first: the nearest are found first
        directory = pending.pop(0)
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        break
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in _SKIPPED:
                            pending.append(entry.path)
                    elif entry.name == name and entry.is_file(follow_symlinks=False):
                        found.append(os.path.relpath(entry.path, cwd))
        except OSError:
            continue
    found = [path for path in found if os.path.join(cwd, path) != os.path.normpath(missing)]
    return sorted(found, key=lambda path: (path.count(os.sep), path))[:MAX_FOUND]


def near_paths_note(cwd: str, missing: str) -> str:
    """`; users.py exists` (or `; a/users.py and b/users.py exist`) for the files named like
    `missing`, or "" when there are none."""
    found = near_paths(cwd, missing)
    if not found:
        return ""
    if len(found) == 1:
        return f"; {found[0]} exists"
    return f"; {', '.join(found[:-1])} and {found[-1]} exist"
