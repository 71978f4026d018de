"""The permission modes a session may be in, as offered to clients, and the check that a mode
may be used here.

Kept apart from the policy (`tools/permissions.py`, which re-exports these names) so that the
command line and the `session/new` answer (`acp/mode_options.py`) name the modes without
importing the policy, the tools' base and the command sandbox before the answer
(docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md). Imports nothing of
the project.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["MODES", "MODE_IDS", "SANDBOX_ENV", "Mode", "ModeInfo", "ModeRefused", "check_mode"]

Mode = Literal["default", "accept_edits", "read_only", "sandboxed", "bypass"]


@dataclass(frozen=True)
class ModeInfo:
    """A mode as offered to clients."""

    id: Mode
    name: str
    description: str


MODES: tuple[ModeInfo, ...] = (
    ModeInfo("default", "Ask", "Ask before editing files or running commands."),
    ModeInfo(
        "accept_edits", "Accept edits", "Edit files in the workspace freely; ask before commands."
    ),
    ModeInfo("read_only", "Read only", "Read and search only: no edits, no commands."),
    ModeInfo(
        "sandboxed",
        "Sandboxed",
        "Edit the workspace freely and run commands in a sandbox (workspace writable, no "
        "network) without asking; ask before a command that needs more.",
    ),
    ModeInfo("bypass", "Bypass", "Allow everything without asking."),
)
MODE_IDS: frozenset[str] = frozenset(m.id for m in MODES)

SANDBOX_ENV = "ACP_SERVER_SANDBOXED"
"""Set to 1 when the agent runs inside a container or sandbox: only then may root use bypass."""


class ModeRefused(Exception):
    """A mode switch that is not allowed here (the message says why)."""


def check_mode(
    mode: str, environ: Mapping[str, str] = os.environ, sandbox_missing: str = ""
) -> Mode:
    """`mode` if this process may use it; `ModeRefused` otherwise. `sandbox_missing` says
    why the command sandbox cannot run here ("" when it can, or is not known yet)."""
    if mode not in MODE_IDS:
        raise ModeRefused(f"unknown mode {mode!r}; modes: {', '.join(sorted(MODE_IDS))}")
    if mode == "sandboxed" and sandbox_missing:
        raise ModeRefused(f"sandboxed mode is not available: {sandbox_missing}")
    if mode == "bypass" and os.geteuid() == 0 and environ.get(SANDBOX_ENV) != "1":
        raise ModeRefused(
            "bypass mode is refused when acp-server runs as root; run it as a normal user, "
            f"or set {SANDBOX_ENV}=1 if it runs inside a container or sandbox"
        )
    return mode  # type: ignore[return-value]
