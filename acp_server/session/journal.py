"""The session journal: one append-only JSONL file per session, crash-safe and single-writer.

Layout: ``<root>/sessions/<session-id>.jsonl``. Line 1 is a `JournalHeader`; every further line
is one record of `acp_server.session.records`, encoded with the shared encoder. The file is
opened with ``O_APPEND`` and each record goes out, newline included, in one ``os.write``, so a
crash can only tear the last line. `Journal.sync` / `Journal.flush` fsync (the caller does it at
turn end); `Journal.close` fsyncs too. A failed write poisons the journal: it refuses further
records rather than append after a torn one.

One writer per session: `JournalStore.create` and `JournalStore.open` take
``flock(LOCK_EX | LOCK_NB)`` on the file and a second opener (another process, or this one)
gets `JournalLocked`.

Loading (`JournalStore.open`) is strict about content and forgiving about where the writer
stopped:

- strict: the header must decode and name this session with a known format version; every
  record line must decode against the record union (unknown record types and extra fields on
  `turn/end` or its outcome, such as the legacy ``{"kind":"aborted","reason":"user"}``, are
  errors). Failures
  raise `JournalCorrupt` naming the file, record and line; nothing is half-loaded.
- forgiving: a last line without its newline that does not decode is a torn write and is
  truncated away with a warning (one that decodes is complete and only gets its newline). A turn
  left open by a crash is closed by `acp_server.session.repair`, and the repair records are
  appended and fsynced, so the next load is clean.

The format, its errors and parsing live in `acp_server.session.journal_format` (re-exported
here: import everything from this module). See
docs/rfc/implemented/architecture/2026-11-30-session-journal.md.

Over 400 lines: writing, loading and repair share one file lock and one on-disk format.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import fcntl
import io
import logging
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import anyio.to_thread
import msgspec

from .journal_format import (
    JOURNAL_FORMAT,
    JOURNAL_VERSION,
    JournalCorrupt,
    JournalError,
    JournalExists,
    JournalHeader,
    JournalLocked,
    JournalNotFound,
    JournalSummary,
    JournalVersionError,
    JournalWriteError,
    check_session_id,
    is_session_id,
    parse_journal,
    summarize,
)
from .records import RECORD_ENCODER, Record, TurnEndRecord
from .repair import repair_records

__all__ = [
    "JOURNAL_FORMAT",
    "JOURNAL_VERSION",
    "Journal",
    "JournalCorrupt",
    "JournalError",
    "JournalExists",
    "JournalHeader",
    "JournalLocked",
    "JournalNotFound",
    "JournalStore",
    "JournalSummary",
    "JournalVersionError",
    "JournalWriteError",
    "LoadedJournal",
    "check_session_id",
]

log = logging.getLogger(__name__)

# macOS fsync does not flush the drive's cache; F_FULLFSYNC does.
_F_FULLFSYNC: int | None = getattr(fcntl, "F_FULLFSYNC", None) if sys.platform == "darwin" else None

# Filesystems without hard links make `create` fall back to creating the file in place.
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS})


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoadedJournal:
    """A session loaded by `JournalStore.open`: its records, and its journal open for appending."""

    header: JournalHeader
    records: list[Record]
    """Every record, repair records included."""
    journal: Journal
    repaired: bool
    """True if open turns were closed (their repair records are in `records` and on disk)."""
    truncated_bytes: int
    """How many bytes of a torn last line were cut off (0 if none)."""


# --- the writer -------------------------------------------------------------------------------


class Journal:
    """The open, append-only writer of one session's journal; holds the session's write lock."""

    __slots__ = ("_buffer", "_failed", "_fd", "_on_close", "path", "session_id")

    def __init__(
        self, session_id: str, path: Path, fd: int, on_close: Callable[[], None] | None = None
    ) -> None:
        """Wrap `fd`, an ``O_APPEND`` descriptor of `path` that already holds the lock (the
        store makes journals; this takes ownership of `fd`)."""
        self.session_id = session_id
        self.path = path
        self._fd = fd
        self._on_close = on_close
        self._failed = False
        self._buffer = bytearray()

    def __repr__(self) -> str:
        state = "closed" if self._fd < 0 else "failed" if self._failed else "open"
        return f"<Journal {self.session_id!r} {state} at {str(self.path)!r}>"

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def append(self, record: Record) -> None:
        """Write one record and its newline with a single ``os.write`` (not fsynced).

        Raises `JournalWriteError` if the write fails, and for every later append: after a
        failed write the journal is poisoned.
        """
        if self._fd < 0:
            raise JournalWriteError(self.path, f"session {self.session_id}: the journal is closed")
        if self._failed:
            raise JournalWriteError(
                self.path,
                f"session {self.session_id}: the journal stopped accepting records "
                "after a failed write",
            )
        buffer = self._buffer
        RECORD_ENCODER.encode_into(record, buffer)
        buffer.append(0x0A)
        try:
            _write_all(self._fd, buffer)
        except OSError as exc:
            self._failed = True
            raise JournalWriteError(
                self.path, f"session {self.session_id}: writing a record failed: {exc}"
            ) from exc

    def sync(self) -> None:
        """fsync the journal, blocking; a no-op once closed (closing fsyncs)."""
        if self._fd < 0:
            return
        try:
            _fsync(self._fd)
        except OSError as exc:
            self._failed = True
            raise JournalWriteError(
                self.path, f"session {self.session_id}: fsync failed: {exc}"
            ) from exc

    async def flush(self) -> None:
        """fsync the journal in a worker thread, so a slow disk does not block the event loop.

        Waits for the fsync even if cancelled. A no-op once closed.
        """
        if self._fd < 0:
            return
        try:
            # A duplicate, so a `close()` meanwhile cannot free the number under the worker.
            fd = os.dup(self._fd)
            await anyio.to_thread.run_sync(_fsync_and_close, fd)
        except OSError as exc:
            self._failed = True
            raise JournalWriteError(
                self.path, f"session {self.session_id}: fsync failed: {exc}"
            ) from exc

    def close(self) -> None:
        """fsync, release the lock and close. Idempotent."""
        fd = self._fd
        if fd < 0:
            return
        self._fd = -1
        try:
            _fsync(fd)
        except OSError as exc:
            raise JournalWriteError(
                self.path, f"session {self.session_id}: fsync on close failed: {exc}"
            ) from exc
        finally:
            # Unlock explicitly: a duplicate held by a running `flush` keeps the file open.
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
                if self._on_close is not None:
                    self._on_close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# --- the store --------------------------------------------------------------------------------


class JournalStore:
    """The journals under ``root/sessions``: create, open, list and delete them."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.sessions_dir = self.root / "sessions"
        self._open_ids: set[str] = set()

    def __repr__(self) -> str:
        return f"JournalStore({str(self.root)!r})"

    def path_for(self, session_id: str) -> Path:
        """The journal file of a session (ValueError for an unsafe session id)."""
        return self.sessions_dir / f"{check_session_id(session_id)}.jsonl"

    def exists(self, session_id: str) -> bool:
        return self.path_for(session_id).is_file()

    def create(self, header: JournalHeader) -> Journal:
        """Create a session's journal with its header line, fsynced and locked.

        The header is written and fsynced under a temporary name and then hard-linked into
        place, so the journal never exists without its header. Raises `JournalExists` if the
        session already has one.
        """
        session_id = header.session_id
        path = self.path_for(session_id)
        if header.format != JOURNAL_FORMAT or header.version != JOURNAL_VERSION:
            raise ValueError(
                f"cannot create a journal with format {header.format!r} version {header.version}"
            )
        self._ensure_sessions_dir()
        data = msgspec.json.encode(header) + b"\n"
        tmp = self.sessions_dir / f".{session_id}.{secrets.token_hex(6)}.tmp"
        fd = _open_new(tmp)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file nobody else knows of
            _write_all(fd, data)
            _fsync(fd)
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise JournalExists(
                    f"session {session_id} already has a journal ({path})"
                ) from None
            except OSError as exc:
                if exc.errno not in _NO_HARD_LINKS:
                    raise
                os.close(fd)
                fd = -1
                fd = self._create_in_place(session_id, path, data)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            raise
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        _fsync_dir(self.sessions_dir)
        return self._track(session_id, path, fd)

    def open(self, session_id: str) -> LoadedJournal:
        """Lock, load, and repair a session's journal; return its records and open journal.

        Raises `JournalNotFound`, `JournalLocked`, or `JournalCorrupt` (never half-loads).
        """
        path = self.path_for(session_id)
        self._refuse_if_open_here(session_id, path)
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise JournalNotFound(f"no journal for session {session_id} ({path})") from None
        try:
            _lock(fd, session_id, path)
            if not _still_at(fd, path):
                raise JournalNotFound(f"session {session_id} was deleted ({path})")
            header, records, truncated = _load(session_id, path, fd)
        except BaseException:
            os.close(fd)
            raise
        journal = self._track(session_id, path, fd)
        try:
            repairs = repair_records(session_id, records)
            if repairs:
                for record in repairs:
                    journal.append(record)
                journal.sync()
                records.extend(repairs)
                log.warning(
                    "%s: closed %d turn(s) a crash left open as interrupted "
                    "(%d repair record(s) appended)",
                    path,
                    sum(1 for record in repairs if isinstance(record, TurnEndRecord)),
                    len(repairs),
                )
        except BaseException:
            journal.close()
            raise
        return LoadedJournal(
            header=header,
            records=records,
            journal=journal,
            repaired=bool(repairs),
            truncated_bytes=truncated,
        )

    def delete(self, session_id: str) -> bool:
        """Delete a session's journal; False if there was none. Refuses (`JournalLocked`)
        while the session is open for writing, here or in another process."""
        path = self.path_for(session_id)
        self._refuse_if_open_here(session_id, path)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            _lock(fd, session_id, path)
            if not _still_at(fd, path):
                return False
            os.unlink(path)
        finally:
            os.close(fd)
        _fsync_dir(self.sessions_dir)
        return True

    def list(self) -> builtins.list[JournalSummary]:
        """A summary of every readable journal, most recently updated first.

        Cheap: reads each header, scans for the first prompt line, and reads the last complete
        line, without decoding the records in between. A journal whose header does not load is
        skipped with a warning.
        """
        try:
            entries = builtins.list(os.scandir(self.sessions_dir))
        except FileNotFoundError:
            return []
        summaries: builtins.list[JournalSummary] = []
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            session_id = entry.name[: -len(".jsonl")]
            if not is_session_id(session_id):
                continue
            path = Path(entry.path)
            try:
                summary = summarize(session_id, path)
            except (OSError, JournalCorrupt) as exc:
                log.warning("skipping session journal %s: %s", path, exc)
                continue
            summaries.append(summary)
        summaries.sort(key=lambda s: (s.updated_at, s.session_id), reverse=True)
        return summaries

    # --- internals ----------------------------------------------------------------------------

    def _refuse_if_open_here(self, session_id: str, path: Path) -> None:
        if session_id in self._open_ids:
            raise JournalLocked(
                f"session {session_id} is already open for writing in this acp-server "
                f"process ({path})"
            )

    def _track(self, session_id: str, path: Path, fd: int) -> Journal:
        self._open_ids.add(session_id)
        return Journal(session_id, path, fd, on_close=lambda: self._open_ids.discard(session_id))

    def _ensure_sessions_dir(self) -> None:
        if self.sessions_dir.is_dir():
            return
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            self.sessions_dir.mkdir(mode=0o700)
        except FileExistsError:
            return
        _fsync_dir(self.root)

    def _create_in_place(self, session_id: str, path: Path, data: bytes) -> int:
        """`create` without hard links: exclusive-create the journal itself, then lock."""
        try:
            fd = _open_new(path)
        except FileExistsError:
            raise JournalExists(f"session {session_id} already has a journal ({path})") from None
        try:
            _lock(fd, session_id, path)
            _write_all(fd, data)
            _fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        return fd


# --- loading ----------------------------------------------------------------------------------


def _load(session_id: str, path: Path, fd: int) -> tuple[JournalHeader, list[Record], int]:
    """Read the whole file (one read) and parse it; cut off a torn last line, or terminate a
    complete unterminated one. Returns the header, the records and the bytes cut off."""
    with io.FileIO(fd, "r", closefd=False) as file:
        data = file.readall()
    parsed = parse_journal(path, session_id, data)
    if parsed.torn_bytes:
        os.ftruncate(fd, len(data) - parsed.torn_bytes)
        _fsync(fd)
        log.warning(
            "%s: dropped a torn last line (record %d, %d bytes) left by an interrupted write",
            path,
            len(parsed.records) + 1,
            parsed.torn_bytes,
        )
    elif parsed.unterminated:
        _write_all(fd, b"\n")
        _fsync(fd)
        log.warning("%s: the last record had no newline; added it", path)
    return parsed.header, parsed.records, parsed.torn_bytes


# --- low-level file operations ----------------------------------------------------------------


def _open_new(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)


def _lock(fd: int, session_id: str, path: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JournalLocked(
            f"session {session_id} is already open for writing by another acp-server "
            f"process ({path})"
        ) from None


def _still_at(fd: int, path: Path) -> bool:
    """Whether `path` still names the file `fd` is open on (not deleted or replaced since)."""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (current.st_dev, current.st_ino)


def _write_all(fd: int, data: bytes | bytearray) -> None:
    """One ``os.write``; loops only on a short write (regular files do not do that short of a
    full disk, and then the next write raises)."""
    written = os.write(fd, data)
    while written < len(data):
        if written <= 0:
            raise OSError(errno.EIO, "write made no progress")
        data = data[written:]
        written = os.write(fd, data)


def _fsync(fd: int) -> None:
    if _F_FULLFSYNC is not None:
        try:
            fcntl.fcntl(fd, _F_FULLFSYNC)
        except OSError:
            pass
        else:
            return
    os.fsync(fd)


def _fsync_and_close(fd: int) -> None:
    try:
        _fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    """Make a directory entry change durable (best effort where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        _fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
