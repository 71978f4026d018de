"""`FileAccess` on the local disk, opening exactly the object the path check passed.

`PathRoots` checks where a path really goes (`realpath`) before a tool uses it. Opening the
checked string afterwards would let a directory swapped for a symbolic link in between carry the
open outside the workspace. So every open here walks the resolved, symlink-free path one
component at a time from a descriptor of "/", each step with `O_NOFOLLOW`: a component that has
become a link since the check fails the open (`PathChanged`) instead of being followed, and
every directory along the way is the one that sits at the checked path. The file itself is
opened with `O_NONBLOCK` and refused unless it is a regular file (a FIFO would block the turn; a
device could be anything). Work runs in worker threads; reads go in bounded chunks that check
the turn signal between them, so no read outlives the turn or a shutdown.
See docs/rfc/implemented/feature/2026-12-01-safe-file-opening.md.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

import anyio.to_thread

from acp_server.cancellation import TurnSignal
from acp_server.tools.text_window import TextWindow, take_window
from acp_server.tools.workspace import NotRegularFile, PathChanged

P = ParamSpec("P")
T = TypeVar("T")

CHUNK_BYTES = 1 << 20
"""Bytes per read: the most a read holds besides the window, and how often it checks the
turn signal."""

COUNT_BUDGET = 64 << 20
"""Bytes after a window that are scanned to count the file's lines (beyond it: "not counted")."""

WHOLE_TEXT_MAX_BYTES = 16 << 20
"""The largest file read whole (by edit_file, and by write_file for its diff)."""

_DIRECTORY_STEP = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "FIFO (named pipe)"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


class Stopped(Exception):
    """The turn signal aborted while a worker thread was reading."""


def special_kind(mode: int) -> str | None:
    """What a non-regular, non-directory file is (None for regular files and directories)."""
    return next((name for test, name in _SPECIAL_KINDS if test(mode)), None)


def open_checked(path: str, flags: int, *, make_parents: bool = False) -> int:
    """A descriptor of the absolute, symlink-free `path`, reached without following any link.

    `flags` are the last component's open flags (`O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC` are
    added; `O_CREAT` creates it with mode 0666 less the umask). `make_parents` creates missing
    directories on the way. Raises `PathChanged` when a component is a symbolic link,
    `NotRegularFile` for a FIFO, device or socket, and the usual `OSError`s otherwise.
    """
    parts = [part for part in path.split(os.sep) if part]
    if not os.path.isabs(path) or any(part in (".", "..") for part in parts):
        raise ValueError(f"not a resolved absolute path: {path!r}")
    directory = os.open(os.sep, _DIRECTORY_STEP)
    try:
        for name in parts[:-1]:
            step = _step(directory, name, path, make_parents)
            os.close(directory)
            directory = step
        return _open_last(directory, parts[-1] if parts else ".", flags, path)
    finally:
        os.close(directory)


def _step(directory: int, name: str, path: str, make_parents: bool) -> int:
    try:
        return os.open(name, _DIRECTORY_STEP, dir_fd=directory)
    except FileNotFoundError:
        if not make_parents:
            raise
        # Made at the same moment by someone else: open whatever is there now.
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=directory)
        return os.open(name, _DIRECTORY_STEP, dir_fd=directory)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            _refuse_link(directory, name, path, wanted_directory=True)
        raise


def _refuse_link(directory: int, name: str, path: str, *, wanted_directory: bool) -> None:
    """Raise `PathChanged` when an open refused by ELOOP/ENOTDIR met a link (or something that
    has changed since: a link is swapped back to a directory in a moment); return when `name`
    is a real non-directory, so the caller's error stands."""
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        raise PathChanged(path, f"{name} vanished") from None
    if stat.S_ISLNK(info.st_mode):
        raise PathChanged(path, f"{name} is now a symbolic link")
    if wanted_directory and stat.S_ISDIR(info.st_mode):
        raise PathChanged(path, f"{name} was replaced while it was being opened")


def _refuse_special(mode: int, path: str) -> None:
    kind = special_kind(mode)
    if kind is not None:
        raise NotRegularFile(path, kind)


def _open_last(directory: int, name: str, flags: int, path: str) -> int:
    try:
        before = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if stat.S_ISLNK(before.st_mode):
            raise PathChanged(path, f"{name} is now a symbolic link")
        _refuse_special(before.st_mode, path)  # before opening: opening a device can act
    flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, 0o666, dir_fd=directory)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link: it changed since the stat above
            _refuse_link(directory, name, path, wanted_directory=False)
            raise PathChanged(path, f"{name} was replaced while it was being opened") from None
        raise
    try:
        _refuse_special(os.fstat(fd).st_mode, path)  # swapped in after the stat above
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_regular(path: str) -> tuple[int, os.stat_result]:
    fd = open_checked(path, os.O_RDONLY)
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
    return fd, info


def _chunks(fd: int) -> Iterator[bytes]:
    while chunk := os.read(fd, CHUNK_BYTES):
        yield chunk


def read_bytes(path: str, limit: int, check: Callable[[], None]) -> bytes:
    """The whole regular file at `path`, refused (EFBIG) when it is larger than `limit`."""
    fd, info = _open_regular(path)
    try:
        if info.st_size > limit:
            raise OSError(
                errno.EFBIG,
                f"it is {info.st_size} bytes, more than the {limit} bytes read whole at once "
                "(read_file reads it in parts)",
            )
        data = bytearray()
        for chunk in _chunks(fd):
            check()
            data += chunk
            if len(data) > limit:
                raise OSError(errno.EFBIG, f"it grew past {limit} bytes while being read")
        return bytes(data)
    finally:
        os.close(fd)


def read_small_file(path: str, limit: int) -> bytes:
    """A configuration-sized regular file (links followed: whose file it is matters, not
    where it lives), refused when it is a FIFO, device or socket (`NotRegularFile`) or larger
    than `limit` (EFBIG): reading it can neither block nor fill the memory."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        _refuse_special(info.st_mode, path)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        data = os.read(fd, limit + 1)
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"larger than {limit} bytes")
        return data
    finally:
        os.close(fd)


def read_window(
    path: str, start: int, max_lines: int, max_bytes: int, check: Callable[[], None]
) -> TextWindow:
    """`take_window` over the regular file at `path`, read in chunks."""
    fd, info = _open_regular(path)
    try:
        return take_window(
            _chunks(fd),
            start,
            max_lines,
            max_bytes,
            size=info.st_size,
            count_budget=COUNT_BUDGET,
            check=check,
        )
    finally:
        os.close(fd)


def write_bytes(path: str, data: bytes) -> None:
    """Create or replace the regular file at `path` (missing parents are created)."""
    fd = open_checked(path, os.O_WRONLY | os.O_CREAT, make_parents=True)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def stopper(signal: TurnSignal) -> Callable[[], None]:
    """A check for worker threads: raises `Stopped` once `signal` aborts."""

    def check() -> None:
        if signal.aborted:
            raise Stopped

    return check


async def in_thread(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`function(*args)` in a worker thread (awaited to the end: never abandoned)."""
    return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))


class LocalFiles:
    """`FileAccess` on the local disk. Text is UTF-8 (undecodable bytes are replaced) and line
    endings are kept exactly."""

    async def read_text(self, path: str, signal: TurnSignal) -> str:
        signal.raise_if_aborted()
        try:
            data = await in_thread(read_bytes, path, WHOLE_TEXT_MAX_BYTES, stopper(signal))
        except Stopped:
            signal.raise_if_aborted()
            raise
        return data.decode("utf-8", errors="replace")

    async def read_window(
        self, path: str, start: int, max_lines: int, max_bytes: int, signal: TurnSignal
    ) -> TextWindow:
        signal.raise_if_aborted()
        try:
            return await in_thread(read_window, path, start, max_lines, max_bytes, stopper(signal))
        except Stopped:
            signal.raise_if_aborted()
            raise

    async def write_text(self, path: str, content: str, signal: TurnSignal) -> None:
        signal.raise_if_aborted()
        await in_thread(write_bytes, path, content.encode("utf-8"))
