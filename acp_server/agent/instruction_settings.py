"""`[instructions]` of the config file: which project instruction files reach the system
prompt and how much of them, with its check; the CLI adds the user's own file, the date and the
skill places.

Kept apart from the instructions themselves (`agent/instructions.py`, which re-exports these
names) so that the config file's reader, which runs before `session/new` is answered, does not
import the files and commands the prompt reads
(docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from acp_server.paths import config_dir
from acp_server.tools.skill_places import SkillPlaces

__all__ = [
    "DEFAULT_FILE_NAMES",
    "DEFAULT_MAX_BYTES",
    "InstructionSettings",
    "instruction_settings",
    "user_instructions_file",
]

DEFAULT_FILE_NAMES = ("AGENTS.md",)
DEFAULT_MAX_BYTES = 32 * 1024


def user_instructions_file(environ: Mapping[str, str] = os.environ) -> Path:
    """`AGENTS.md` in the user's config dir (`acp_server.paths.config_dir`)."""
    return config_dir(environ) / "AGENTS.md"


@dataclass(frozen=True)
class InstructionSettings:
    """Which instruction files are read, and how much of them may reach the model."""

    file_names: tuple[str, ...] = field(
        default=DEFAULT_FILE_NAMES, metadata={"config_key": "files"}
    )
    """Names looked for in every directory from the repository root down to the cwd."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """The budget for all instruction files together; the rest is cut with a note."""
    user_file: Path | None = field(default=None, metadata={"config_key": None})
    """The user's own file (`$XDG_CONFIG_HOME/acp-server/AGENTS.md`), read first."""
    today: Callable[[], str] = field(
        default=lambda: datetime.date.today().isoformat(), metadata={"config_key": None}
    )
    """Today's date as YYYY-MM-DD; fixed under --deterministic."""
    skill_places: SkillPlaces = field(default_factory=SkillPlaces, metadata={"config_key": None})
    """Where skills are looked for (`[skills] dirs`); their names and descriptions are listed."""


def instruction_settings(
    entry: Any, error: Callable[[str, str | None, str | None], Exception]
) -> InstructionSettings:
    """The config file's `[instructions]` table over the defaults (`user_file` and `today` are
    the CLI's to set); `error(problem, key, table)` makes the exception naming the file and
    line."""
    table = "instructions"
    if not isinstance(entry, dict):
        raise error("[instructions] must be a table", "instructions", None)
    settings = InstructionSettings()
    for key, value in entry.items():
        if key == "files":
            if not isinstance(value, list) or not all(
                isinstance(v, str) and v and "/" not in v and v not in (".", "..") for v in value
            ):
                raise error(
                    "[instructions] `files` must be a list of file names (no directories)",
                    key,
                    table,
                )
            settings = replace(settings, file_names=tuple(value))
        elif key == "max_bytes":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise error(
                    "[instructions] `max_bytes` must be a whole number of bytes (0 or more)",
                    key,
                    table,
                )
            settings = replace(settings, max_bytes=value)
        else:
            raise error(
                f"unknown key `{key}` in [instructions]; expected files or max_bytes", key, table
            )
    return settings
