"""Where tools act: the workspace roots, and how files and commands are reached.

Tools never touch the disk or spawn processes directly: they go through `FileAccess` and
`CommandRunner`, which the session wires either to the local machine (`local_files`,
`local_commands`) or to the ACP client (`fs/*` sees the editor's unsaved buffers; `terminal/*`
shows the command live in the editor).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from acp_server.cancellation import TurnSignal
from acp_server.tools.text_window import TextWindow


class PathRefused(Exception):
    """A path a tool must not use; the message says why (tools answer it as a failed call)."""


class PathOutsideWorkspace(PathRefused):
    """A path resolves outside every workspace root."""

    def __init__(self, path: str, resolved: str, roots: Sequence[str]) -> None:
        where = ", ".join(roots)
        super().__init__(
            f"{path} is outside the workspace (resolves to {resolved}); allowed roots: {where}"
        )
        self.path = path
        self.resolved = resolved
        self.roots = list(roots)


class PathChanged(PathRefused):
    """A checked path no longer leads where it did: a component became a symbolic link (or
    vanished) between the check and the open."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path} changed while it was being opened ({why}); not followed")
        self.path = path


class NotRegularFile(PathRefused):
    """A FIFO, device or socket: reading or writing one could block or act on hardware."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is a {kind}, not a regular file; only regular files are used")
        self.path = path


MAX_LINKS = 40
"""Symbolic links one path may go through, as Linux allows (`ELOOP` beyond)."""


class TooManyLinks(PathRefused):
    """A path goes through a link loop, or a chain of more links than `MAX_LINKS`."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} goes through more than {MAX_LINKS} symbolic links (a loop or a chain); "
            "not followed"
        )
        self.path = path


def real_path(path: str) -> str:
    """`os.path.realpath(path)` without recursion, and refusing a link loop or chain.

    Python 3.11's `realpath` recurses once per symbolic link, so a repository holding a chain
    of 1,100 links raised `RecursionError`, and it returns a loop unresolved. Here the links
    are followed with a stack, at most `MAX_LINKS` of them (`TooManyLinks` beyond); a missing
    or unreadable component is taken as it is, as `realpath` does. An error of `readlink` (a
    link removed after its `lstat`) propagates."""
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    pending = path.split("/")[::-1]  # the next component is at the end
    resolved = "/"
    links = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, name)
        try:
            is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except OSError:  # missing or unreadable: taken as it is, as `realpath` does
            is_link = False
        if not is_link:
            resolved = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            raise TooManyLinks(path)
        target = os.readlink(candidate)
        if target.startswith("/"):
            resolved = "/"
        pending.extend(target.split("/")[::-1])
    return resolved


def _root(path: str) -> str:
    """A workspace root, resolved; as given when it cannot be (a loop: nothing is under it)."""
    try:
        return real_path(path)
    except (OSError, PathRefused):
        return os.path.abspath(path)


class PathRoots:
    """The session's roots as the tools confine paths to them: its cwd plus its additional
    directories (resolved), and the paths outside them the user granted. Not a sandbox: the
    command sandbox is `acp_server.tools.command_sandbox.CommandSandbox`."""

    def __init__(self, cwd: str, additional_directories: Sequence[str] = ()) -> None:
        self.cwd = cwd
        self.roots = [_root(cwd), *(_root(d) for d in additional_directories)]
        self.granted: set[str] = set()
        """Resolved paths outside the roots that the user explicitly allowed."""

    def resolve(self, path: str) -> str:
        """The absolute, symlink-free form of `path` (relative paths are against the cwd).

        Raises `PathRefused` for a NUL byte, `TooManyLinks` for a link loop or a chain of more
        than `MAX_LINKS`, and `PathChanged` when the path changes under `real_path` (a link
        removed between its `lstat` and its `readlink`)."""
        if "\0" in path:
            raise PathRefused(f"{path!r} contains a NUL byte, which no path can hold")
        joined = path if os.path.isabs(path) else os.path.join(self.cwd, path)
        try:
            return real_path(joined)
        except OSError as exc:
            raise PathChanged(path, exc.strerror or str(exc)) from None

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
        """The file's whole text (raises FileNotFoundError, IsADirectoryError, ...)."""

    async def read_window(
        self, path: str, start: int, max_lines: int, max_bytes: int, signal: TurnSignal
    ) -> TextWindow:
        """At most `max_lines` lines (and `max_bytes` bytes) from line `start` (1-based)."""

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


class CommandWatch(Protocol):
    """Who is shown a command while it runs (the tool call): the client terminal it runs in
    as soon as that exists, or its output as it arrives when it runs locally."""

    async def terminal(self, terminal_id: str) -> None:
        """The command runs in this client terminal (the client shows its live output)."""

    def output(self, text: str) -> None:
        """More of a local command's output (stdout and stderr as they arrive)."""


class CommandRunner(Protocol):
    """Running one shell command to completion, killable through the turn signal."""

    async def run(
        self,
        command: str,
        cwd: str,
        timeout: float | None,  # noqa: ASYNC109 - expiry kills the command and is reported
        signal: TurnSignal,
        watch: CommandWatch | None = None,
    ) -> CommandResult:
        """Run `command` with `sh -c` semantics in `cwd`; on abort kill it and raise
        TurnAborted; on timeout kill it and return `timed_out=True`. `watch` is told about
        the command while it runs."""


class SplitFiles:
    """Reads from one `FileAccess`, writes through another (a client may offer only one)."""

    def __init__(self, reader: FileAccess, writer: FileAccess) -> None:
        self._reader = reader
        self._writer = writer

    async def read_text(self, path: str, signal: TurnSignal) -> str:
        return await self._reader.read_text(path, signal)

    async def read_window(
        self, path: str, start: int, max_lines: int, max_bytes: int, signal: TurnSignal
    ) -> TextWindow:
        return await self._reader.read_window(path, start, max_lines, max_bytes, signal)

    async def write_text(self, path: str, content: str, signal: TurnSignal) -> None:
        await self._writer.write_text(path, content, signal)
