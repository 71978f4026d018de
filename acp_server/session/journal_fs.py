"""The file operations under the session journal: one write per record, fsync (with macOS's
F_FULLFSYNC), the non-blocking write lock, and the checks the store makes before it trusts a
path. No knowledge of records: `acp_server.session.journal_writer` and
`acp_server.session.journal_store` build on these.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
from pathlib import Path

from .journal_format import JournalLocked

__all__ = [
    "F_FULLFSYNC",
    "cause",
    "fsync",
    "fsync_and_close",
    "fsync_dir",
    "lock",
    "open_new",
    "still_at",
    "write_all",
]

F_FULLFSYNC: int | None = getattr(fcntl, "F_FULLFSYNC", None) if sys.platform == "darwin" else None
"""macOS fsync does not flush the drive's cache; F_FULLFSYNC does (None elsewhere)."""


def cause(exc: OSError) -> str:
    """An OS error as `ENOSPC (No space left on device)`: the code a user can search for."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{name} ({text})" if name else text


def open_new(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)


def lock(fd: int, session_id: str, path: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JournalLocked(
            f"session {session_id} is already open for writing by another acp-server "
            f"process ({path})"
        ) from None


def still_at(fd: int, path: Path) -> bool:
    """Whether `path` still names the file `fd` is open on (not deleted or replaced since)."""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (current.st_dev, current.st_ino)


def write_all(fd: int, data: bytes | bytearray) -> None:
    """One ``os.write``; loops only on a short write (regular files do not do that short of a
    full disk, and then the next write raises)."""
    written = os.write(fd, data)
    while written < len(data):
        if written <= 0:
            raise OSError(errno.EIO, "write made no progress")
        data = data[written:]
        written = os.write(fd, data)


def fsync(fd: int) -> None:
    if F_FULLFSYNC is not None:
        try:
            fcntl.fcntl(fd, F_FULLFSYNC)
        except OSError:
            pass
        else:
            return
    os.fsync(fd)


def fsync_and_close(fd: int) -> None:
    try:
        fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make a directory entry change durable (best effort where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
