"""Where tools act: the workspace roots, and how files and commands are reached.

Tools never touch the disk or spawn processes directly: they go through `FileAccess` and
`CommandRunner`, which the session wires either to the local machine or to the ACP client
(`fs/*` sees the editor's unsaved buffers; `terminal/*` shows the command live in the editor).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import anyio

from acp_server.agent.cancellation import TurnSignal


class PathOutsideWorkspace(Exception):
    """A path resolves outside every workspace root."""

    def __init__(self, path: str, resolved: str, roots: Sequence[str]) -> None:
        where = ", ".join(roots)
        super().__init__(
            f"{path} is outside the workspace (resolves to {resolved}); allowed roots: {where}"
        )
        self.path = path
        self.resolved = resolved
        self.roots = list(roots)


class Sandbox:
    """The session's workspace roots: its cwd plus its additional directories."""

    def __init__(self, cwd: str, additional_directories: Sequence[str] = ()) -> None:
        self.cwd = cwd
        self.roots = [os.path.realpath(cwd), *(os.path.realpath(d) for d in additional_directories)]
        self.granted: set[str] = set()
        """Resolved paths outside the roots that the user explicitly allowed."""

    def resolve(self, path: str) -> str:
        """The absolute, symlink-free form of `path` (relative paths are against the cwd)."""
        joined = path if os.path.isabs(path) else os.path.join(self.cwd, path)
        return os.path.realpath(joined)

    def contains(self, resolved: str) -> bool:
        """True if an already resolved path is inside one of the roots."""
        return any(resolved == root or resolved.startswith(root + os.sep) for root in self.roots)

    def check(self, path: str) -> str:
        """`resolve(path)`, refusing a path outside every root (`..` and symlinks included)."""
        resolved = self.resolve(path)
        if not self.contains(resolved) and resolved not in self.granted:
            raise PathOutsideWorkspace(path, resolved, self.roots)
        return resolved


class FileAccess(Protocol):
    """Reading and writing text files (paths are absolute and already checked)."""

    async def read_text(self, path: str, signal: TurnSignal) -> str:
        """The file's text (raises FileNotFoundError, IsADirectoryError, ...)."""

    async def write_text(self, path: str, content: str, signal: TurnSignal) -> None:
        """Create or replace the file."""


@dataclass(frozen=True)
class CommandResult:
    """How a shell command ended."""

    output: str
    exit_code: int | None
    posix_signal: str | None = None
    """The name of the signal that killed the command (`SIGKILL`), if one did."""
    truncated: bool = False
    timed_out: bool = False
    terminal_id: str | None = None


class CommandRunner(Protocol):
    """Running one shell command to completion, killable through the turn signal."""

    async def run(
        self,
        command: str,
        cwd: str,
        timeout: float | None,  # noqa: ASYNC109 - expiry kills the command and is reported
        signal: TurnSignal,
    ) -> CommandResult:
        """Run `command` with `sh -c` semantics in `cwd`; on abort kill it and raise
        TurnAborted; on timeout kill it and return `timed_out=True`."""


class LocalFiles:
    """`FileAccess` on the local disk, in a worker thread (a slow disk must not stall the
    loop). Line endings are kept exactly: `newline=""` stops Python turning CRLF into LF."""

    async def read_text(self, path: str, signal: TurnSignal) -> str:
        signal.raise_if_aborted()
        return await anyio.to_thread.run_sync(_read_text, path)

    async def write_text(self, path: str, content: str, signal: TurnSignal) -> None:
        signal.raise_if_aborted()
        await anyio.to_thread.run_sync(_write_text, path, content)


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="") as file:
        return file.read()


def _write_text(path: str, content: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as file:
        file.write(content)
