"""File checkpoints: what the file tools' writes replaced, kept content-addressed in the data
dir, and putting it back for a rewind.

Before `write_file` or `edit_file` changes a file, `Checkpoints.keep` copies the bytes it held
into ``<data dir>/checkpoints/<aa>/<sha256>`` (`acp_server.tools.checkpoint_store`: one file
per distinct content, written whole and renamed into place, the store under a total cap) and
returns the `FileCheckpoint` the tool's result carries into the
journal. A file larger than the cap (`[tools] max_checkpoint_bytes`), or one that is not a
regular file, is not kept: the checkpoint says why, and a rewind leaves that file alone.

Restoring (`plan_restore`, `apply`, `undo`) works on the resolved paths the tools wrote, with
the same link-refusing opens as the tools (`local_files.open_checked`): a file that became a
symbolic link, a FIFO or a directory, or that no longer holds what the agent wrote (edited
outside the agent), is reported and never touched; `apply` reads the file again through the
open that restores it, so one edited after the plan read it is refused (`PathChanged`), not
overwritten.
See docs/rfc/implemented/feature/2026-12-02-checkpoints-and-rewind.md.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from acp_server.cancellation import TurnSignal
from acp_server.session.records import FileCheckpoint
from acp_server.session.rewind import FileChange
from acp_server.tools.checkpoint_store import (
    BlobDamaged,
    BlobMissing,
    CheckpointStore,
    OverStoreCap,
    is_digest,
    sha256,
)
from acp_server.tools.local_files import (
    CHUNK_BYTES,
    in_thread,
    open_checked,
    special_kind,
)
from acp_server.tools.workspace import NotRegularFile, PathChanged, PathRefused, PathRoots

CHECKPOINTS_DIR = "checkpoints"
"""Where, under the data dir, the file checkpoints are kept."""

DEFAULT_MAX_CHECKPOINT_BYTES = 4 << 20
"""The largest file whose previous content is kept (`[tools] max_checkpoint_bytes`)."""

RESTORE_MAX_BYTES = 64 << 20
"""The largest current file a rewind reads to see whether it still holds the agent's write."""


def _read_regular(path: str, limit: int) -> bytes | None:
    """The regular file at resolved `path` (None when absent), never following a link;
    EFBIG when larger than `limit`. Raises PathChanged, NotRegularFile, IsADirectoryError."""
    try:
        fd = open_checked(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        if info.st_size > limit:
            raise OSError(errno.EFBIG, f"it is {info.st_size} bytes")
        data = bytearray()
        while chunk := os.read(fd, CHUNK_BYTES):
            data += chunk
            if len(data) > limit:
                raise OSError(errno.EFBIG, f"it grew past {limit} bytes while being read")
        return bytes(data)
    finally:
        os.close(fd)


class Checkpoints:
    """Keeps the previous content of the files one session's file tools write."""

    def __init__(self, store: CheckpointStore, max_bytes: int = DEFAULT_MAX_CHECKPOINT_BYTES):
        self.store = store
        self.max_bytes = max_bytes

    def capture(self, path: str, written: bytes) -> FileCheckpoint:
        """The checkpoint of resolved `path` before `written` replaces it (runs in a thread)."""
        after = sha256(written)
        try:
            before = _read_regular(path, self.max_bytes)
        except (PathChanged, NotRegularFile) as exc:
            return FileCheckpoint(path=path, after=after, skipped=str(exc))
        except IsADirectoryError:
            return FileCheckpoint(path=path, after=after, skipped="it was a directory")
        except OSError as exc:
            if exc.errno == errno.EFBIG:
                return FileCheckpoint(
                    path=path,
                    after=after,
                    skipped=f"{exc.strerror}, over the checkpoint cap of {self.max_bytes} bytes "
                    "([tools] max_checkpoint_bytes)",
                )
            return FileCheckpoint(path=path, after=after, skipped=f"unreadable: {exc}")
        if before is None:
            return FileCheckpoint(path=path, after=after)
        try:
            digest = self.store.put(before)
        except OverStoreCap as exc:
            return FileCheckpoint(path=path, after=after, skipped=str(exc))
        except OSError as exc:
            return FileCheckpoint(path=path, after=after, skipped=f"not stored: {exc}")
        return FileCheckpoint(path=path, before=digest, after=after)

    async def keep(self, path: str, content: str, signal: TurnSignal) -> FileCheckpoint:
        """Keep what resolved `path` holds before a tool writes `content` there."""
        signal.raise_if_aborted()
        return await in_thread(self.capture, path, content.encode("utf-8"))


# --- restoring -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Restore:
    """One file a rewind puts back: `data` (None: remove the file) replaces `current`."""

    path: str
    data: bytes | None
    current: bytes


@dataclass(frozen=True)
class Keep:
    """One file a rewind leaves as it is, and why."""

    path: str
    reason: str
    kept_at: str | None = None


def _plan_one(
    change: FileChange, store: CheckpointStore, path_roots: PathRoots, since: str
) -> Restore | Keep | None:
    """What to do with one changed file (None: it already holds its content before)."""
    if change.skipped is not None:
        return Keep(change.path, f"its content before was not kept: {change.skipped}")
    # The path and the digest come from the journal: refuse what the tools never write.
    if change.before is not None and not is_digest(change.before):
        return Keep(change.path, "its checkpoint's name is not a SHA-256 digest")
    if os.path.normpath(change.path) != change.path or not os.path.isabs(change.path):
        return Keep(change.path, "it is not a resolved absolute path")
    saved = store.kept_at(change.before) if change.before is not None else None
    if not path_roots.contains(change.path):
        return Keep(change.path, "it is outside the session's workspace roots", saved)
    try:
        current = _read_regular(change.path, RESTORE_MAX_BYTES)
    except PathChanged:
        return Keep(change.path, "it is now (or lies behind) a symbolic link; not followed", saved)
    except NotRegularFile as exc:
        return Keep(change.path, f"it is now a {exc}", saved)
    except IsADirectoryError:
        return Keep(change.path, "it is now a directory", saved)
    except OSError as exc:
        return Keep(change.path, f"it cannot be read now: {exc.strerror or exc}", saved)
    now = None if current is None else sha256(current)
    if now == change.before:
        return None
    if now != change.after:
        what = "removed" if current is None else "changed"
        return Keep(change.path, f"it was {what} outside the agent since {since}", saved)
    assert current is not None
    if change.before is None:
        return Restore(change.path, None, current)
    try:
        data = store.get(change.before)
    except (BlobMissing, BlobDamaged) as exc:
        return Keep(change.path, f"not restorable: {exc}")
    except OSError as exc:
        return Keep(change.path, f"not restorable: its checkpoint cannot be read: {exc}")
    return Restore(change.path, data, current)


def plan_restore(
    changes: Sequence[FileChange], store: CheckpointStore, path_roots: PathRoots, since: str
) -> tuple[list[Restore], list[Keep], list[str]]:
    """Files to put back, files to leave (with why), and files already as they were (runs in
    a thread: it reads every changed file)."""
    restores: list[Restore] = []
    keeps: list[Keep] = []
    unchanged: list[str] = []
    for change in changes:
        step = _plan_one(change, store, path_roots, since)
        if step is None:
            unchanged.append(change.path)
        elif isinstance(step, Keep):
            keeps.append(step)
        else:
            restores.append(step)
    return restores, keeps, unchanged


def _still_holds(fd: int, expected: bytes, path: str) -> None:
    """Raise `PathChanged` unless the open file `fd` holds exactly `expected` (what the plan
    read): a file edited between the check and the restore is not overwritten."""
    data = bytearray()
    while chunk := os.read(fd, CHUNK_BYTES):
        data += chunk
        if len(data) > len(expected):
            break
    if data != expected:
        raise PathChanged(path, "its content changed after it was checked")


def _write(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Replace the content of resolved `path` with `data`; with `expected`, only while the
    file still holds it."""
    fd = open_checked(path, os.O_RDWR | os.O_CREAT, make_parents=True)
    try:
        if expected is not None:
            _still_holds(fd, expected, path)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _remove(path: str, expected: bytes) -> None:
    """Remove the regular file at resolved `path`, only while it still holds `expected`."""
    parent, name = os.path.split(path)
    fd = open_checked(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            kind = special_kind(info.st_mode) or "directory or link"
            raise NotRegularFile(path, kind)
        file = open_checked(path, os.O_RDONLY)
        try:
            _still_holds(file, expected, path)
        finally:
            os.close(file)
        os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def apply(step: Restore) -> None:
    """Put one file back (in a thread), unless it changed since `plan_restore` read it."""
    if step.data is None:
        _remove(step.path, step.current)
    else:
        _write(step.path, step.data, step.current)


def undo(steps: Sequence[Restore]) -> list[str]:
    """Put the agent's content back into files `apply` already restored, newest first (in a
    thread); the paths that could not be put back."""
    failed: list[str] = []
    for step in reversed(steps):
        try:
            _write(step.path, step.current)
        except (OSError, PathRefused):
            failed.append(step.path)
    return failed
