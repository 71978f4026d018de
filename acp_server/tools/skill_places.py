"""Where skills are looked for: the config file's `[skills] dirs`, owned here.

Each entry is a directory that holds skill folders (each with a `SKILL.md`):

- a relative path (default `.agents/skills` and `.claude/skills`) is looked for in every
  directory from the repository root down to the session's cwd, and is the repository's: a
  folder that leads out of the repository is refused (`tools/custom_commands.py`);
- an absolute path or one starting with `~` is the user's own, read as it is.

The config dir's `skills/` (`$XDG_CONFIG_HOME/acp-server/skills/`) is always read, first. A
later place overrides an earlier one of the same skill name: the user's places, then the
repository's from its root down to the cwd; at the same level the first entry listed wins.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_SKILL_DIRS", "SkillPlaces", "skill_places"]

DEFAULT_SKILL_DIRS = (".agents/skills", ".claude/skills")
"""The open format's place, and Claude Code's for compatibility."""

_MAX_DIRS = 32
"""More entries than this are refused: every prompt scans them all."""


@dataclass(frozen=True)
class SkillPlaces:
    """`[skills] dirs`, split into the repository's places and the user's own."""

    repository: tuple[Path, ...] = field(
        default=tuple(Path(d) for d in DEFAULT_SKILL_DIRS), metadata={"config_key": "dirs"}
    )
    """Directories holding skill folders: a relative one is looked for in every directory from
    the repository root down to the cwd, an absolute or `~` one is the user's own."""
    user: tuple[Path, ...] = field(default=(), metadata={"config_key": None})
    """Absolute paths (`~` expanded), read besides the config dir's `skills/`."""


def skill_places(
    entry: Any, error: Callable[[str, str | None, str | None], Exception]
) -> SkillPlaces:
    """The config file's `[skills]` table; `error(problem, key, table)` makes the exception
    that names the file and line."""
    table = "skills"
    if not isinstance(entry, dict):
        raise error("[skills] must be a table", table, None)
    places = SkillPlaces()
    for key, value in entry.items():
        if key != "dirs":
            raise error(f"unknown key `{key}` in [skills]; expected dirs", key, table)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise error("[skills] `dirs` must be a list of directory paths", key, table)
        if len(value) > _MAX_DIRS:
            raise error(f"[skills] `dirs` may list at most {_MAX_DIRS} directories", key, table)
        repository: list[Path] = []
        user: list[Path] = []
        for text in value:
            if "\0" in text:
                raise error("[skills] `dirs` entries may not hold a NUL byte", key, table)
            path = Path(os.path.expanduser(text))
            if path.is_absolute():
                user.append(path)
            elif ".." in path.parts:
                raise error(
                    f"[skills] `dirs`: {text!r} climbs out with `..`; give an absolute path "
                    "for a directory outside the repository",
                    key,
                    table,
                )
            else:
                repository.append(path)
        places = SkillPlaces(tuple(repository), tuple(user))
    return places
