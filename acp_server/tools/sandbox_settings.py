"""`[sandbox]` of the config file: what commands in sandboxed mode may reach, and its check.

Kept apart from the sandbox itself (`tools/command_sandbox.py`, which re-exports both names) so
that the config file's reader, which runs before `session/new` is answered, does not import
the process layer and bubblewrap (docs/rfc/implemented/architecture/
2026-12-01-ready-before-the-runtime.md). Imports nothing of the project.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["SandboxSettings", "sandbox_settings"]


@dataclass(frozen=True)
class SandboxSettings:
    """`[sandbox]` of the config file."""

    network: bool = False
    """Whether confined commands reach the network without asking."""
    writable: tuple[str, ...] = ()
    """Paths writable besides the workspace roots (`~` is expanded; missing ones are skipped)."""


def sandbox_settings(
    entry: Any, error: Callable[[str, str | None, str | None], Exception]
) -> SandboxSettings:
    """The config file's `[sandbox]` table; `error(problem, key, table)` makes the exception
    that names the file and line."""
    if not isinstance(entry, dict):
        raise error("[sandbox] must be a table", "sandbox", None)
    network, writable = False, ()
    for key, value in entry.items():
        if key == "network" and isinstance(value, bool):
            network = value
        elif key == "writable" and (
            isinstance(value, list)
            and all(isinstance(v, str) and v[:1] in "/~" and "\0" not in v for v in value)
        ):
            writable = tuple(value)
        elif key in ("network", "writable"):
            kind = "true or false" if key == "network" else "a list of paths (/... or ~/...)"
            raise error(f"[sandbox] `{key}` must be {kind}", key, "sandbox")
        else:
            raise error(
                f"unknown key `{key}` in [sandbox]; expected network or writable", key, "sandbox"
            )
    return SandboxSettings(network, writable)
