"""Reading a repository's own files that reach the model or the user's prompt (`AGENTS.md`,
custom command files) the hostile-input way: no link out of the repository, no FIFO or device,
no file of another user, never more than a budget. (Where the user's own AGENTS.md is:
`acp_server/agent/instruction_settings.py`.)

Kept light (no runtime imports): `session/new` lists custom commands before the runtime loads.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from acp_server.printable import one_line
from acp_server.tools.workspace import PathRefused, TooManyLinks, real_path


def find_repository_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory or a worktree's
    file); None outside a repository."""
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return None


def directories_between(root: Path, cwd: Path) -> list[Path]:
    """`root`, then each directory on the way down to `cwd` (inclusive)."""
    try:
        relative = cwd.relative_to(root)
    except ValueError:
        return [cwd]
    chain = [root]
    for part in relative.parts:
        chain.append(chain[-1] / part)
    return chain


def read_capped(
    path: Path, must_stay_in: Path | None, budget: int
) -> tuple[str, int, str | None] | None:
    """(text, file size, note) for a readable regular file, reading at most `budget` bytes;
    None when there is no such file. A refused file yields a note instead of its text. Repository
    files (`must_stay_in` set) may not link outside the repository."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if must_stay_in is not None:
        owner = _foreign_owner(path, info)
        if owner is not None:
            return (
                "",
                0,
                (
                    f"skipped: owned by another user (uid {owner}); instructions are read only "
                    "from files and directories of yours or root's"
                ),
            )
    if stat.S_ISLNK(info.st_mode) and must_stay_in is not None:
        # A cloned repository can point AGENTS.md at any file of the user's.
        try:
            target = Path(real_path(str(path)))
            inside = target.is_relative_to(real_path(str(must_stay_in)))
        except (OSError, PathRefused) as exc:  # a loop, a chain of 1,100 links
            return "", 0, f"skipped: its link cannot be followed ({_reason(exc)})"
        if not inside:
            where = one_line(str(must_stay_in))
            return "", 0, f"skipped: it links to {one_line(str(target))}, outside {where}"
    if budget <= 0:
        return "", info.st_size, "skipped: the budget for instruction files is used up"
    try:
        # O_NONBLOCK: a FIFO planted under this name must not hang the turn.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return "", 0, f"skipped: cannot open it ({exc.strerror})"
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return "", 0, "skipped: not a regular file"
        data = os.read(fd, budget)
    except OSError as exc:
        return "", 0, f"skipped: cannot read it ({exc.strerror})"
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="ignore")  # a cut may split a character
    return text, opened.st_size, None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, TooManyLinks):
        return "a loop or a chain of links"
    return str(exc)


def _foreign_owner(path: Path, info: os.stat_result) -> int | None:
    """The uid of another user (neither ours nor root's) owning the file or its directory."""
    ours = (os.geteuid(), 0)
    if info.st_uid not in ours:
        return info.st_uid
    try:
        directory = os.stat(path.parent)
    except OSError:
        return None
    return directory.st_uid if directory.st_uid not in ours else None
