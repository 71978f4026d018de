"""The session journal: one append-only JSONL file per session, crash-safe and single-writer.

Layout: ``<root>/sessions/<session-id>.jsonl``. Line 1 is a `JournalHeader`; every further line
is one record of `acp_server.session.records`, encoded with the shared encoder. The file is
opened with ``O_APPEND`` and each record goes out, newline included, in one ``os.write``, so a
crash can only tear the last line. `Journal.sync` / `Journal.flush` fsync (the caller does it
at turn end); `Journal.close` fsyncs too. A failed write (disk full, I/O error, read-only file
system) is cut back off the file, and the records from it on wait in memory until a flush can
write them: the file never holds a torn line followed by more records, and `Journal.unsaved`
and the flush's `JournalWriteError` tell the caller that acknowledged work is not on disk.

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

Over 500 lines: one wire format: the journal file, whose writing (with its failure
handling), loading and repair share one file lock and the invariant that the file is a
durable prefix of the log.
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
    """The open, append-only writer of one session's journal; holds the session's write lock.

    The file always holds whole records, in log order, with nothing missing in between: a write
    that fails (ENOSPC, EIO, EROFS, EFBIG) is cut back off the file, and it and every later
    record wait in memory (`unsaved`) until a `flush` or `sync` manages to write them. So a
    full disk costs durability, never a torn line in the middle of the journal, and the session
    catches up once there is room. Only if cutting a failed write back fails too does the
    journal stop writing for good (the loader cuts the torn tail off on the next load).
    """

    __slots__ = (
        "_backlog",
        "_broken",
        "_buffer",
        "_fd",
        "_on_close",
        "_size",
        "_synced_size",
        "failure",
        "path",
        "session_id",
    )

    def __init__(
        self, session_id: str, path: Path, fd: int, on_close: Callable[[], None] | None = None
    ) -> None:
        """Wrap `fd`, an ``O_APPEND`` descriptor of `path` that already holds the lock and
        whose content is durable (the store makes journals; this takes ownership of `fd`)."""
        self.session_id = session_id
        self.path = path
        self._fd = fd
        self._on_close = on_close
        self._buffer = bytearray()
        self._size = os.fstat(fd).st_size
        self._synced_size = self._size
        self._backlog = bytearray()
        """Encoded records not on disk yet, in order (empty unless a write failed)."""
        self._broken = False
        """A failed write could not be cut back: nothing more may be appended to the file."""
        self.failure: JournalWriteError | None = None
        """Why records are unsaved, while `unsaved` is true."""

    def __repr__(self) -> str:
        state = "closed" if self._fd < 0 else "unsaved" if self.unsaved else "open"
        return f"<Journal {self.session_id!r} {state} at {str(self.path)!r}>"

    @property
    def closed(self) -> bool:
        return self._fd < 0

    @property
    def unsaved(self) -> bool:
        """True while appended records are not all written (see `failure` for why)."""
        return bool(self._backlog) or self._broken

    def append(self, record: Record) -> None:
        """Write one record and its newline with a single ``os.write`` (not fsynced).

        A failed write is not raised here: the record waits in memory behind `failure`, and
        so does every later one until `flush`/`sync` writes them (they raise it). Raises
        `JournalWriteError` only once the journal is closed.
        """
        if self._fd < 0:
            raise JournalWriteError(self.path, f"session {self.session_id}: the journal is closed")
        buffer = self._buffer
        buffer.clear()
        RECORD_ENCODER.encode_into(record, buffer)
        buffer.append(0x0A)
        if self.unsaved:
            self._backlog += buffer  # keep log order; written at the next flush
            return
        self._write(buffer, "writing a record")

    def sync(self) -> None:
        """Write what waits in memory and fsync, blocking; a no-op once closed.

        Raises `JournalWriteError` (naming the cause) if records remain unsaved.
        """
        if self._fd < 0:
            return
        self._catch_up()
        size = self._size
        try:
            _fsync(self._fd)
        except OSError as exc:
            self._fsync_failed(exc)
        self._synced_size = max(self._synced_size, size)

    async def flush(self) -> None:
        """`sync`, with the fsync in a worker thread so a slow disk does not block the event
        loop. Waits for the fsync even if cancelled. A no-op once closed."""
        if self._fd < 0:
            return
        self._catch_up()
        size = self._size
        try:
            # A duplicate, so a `close()` meanwhile cannot free the number under the worker.
            fd = os.dup(self._fd)
            await anyio.to_thread.run_sync(_fsync_and_close, fd)
        except OSError as exc:
            if self._fd < 0:  # closed meanwhile: closing synced (or reported) it
                return
            self._fsync_failed(exc)
        self._synced_size = max(self._synced_size, size)

    def close(self) -> None:
        """Write what waits, fsync, release the lock and close. Idempotent.

        Raises `JournalWriteError` if records could not be saved (they are lost then).
        """
        fd = self._fd
        if fd < 0:
            return
        try:
            self.sync()
        finally:
            self._fd = -1
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

    # --- failures -----------------------------------------------------------------------------

    def _write(self, data: bytes | bytearray, what: str) -> bool:
        """Append `data` whole, or cut back whatever part of it reached the file and keep it
        in the backlog. True if it was written."""
        start = self._size
        try:
            _write_all(self._fd, data)
        except OSError as exc:
            self._cut_back(start)
            if data is not self._backlog:
                self._backlog += data
            if self.failure is None:
                log.warning(
                    "%s: cannot save session %s (%s); keeping its records in memory until "
                    "the journal can be written",
                    self.path,
                    self.session_id,
                    _cause(exc),
                )
            self.failure = self._fail(what, exc)
            return False
        self._size = start + len(data)
        return True

    def _catch_up(self) -> None:
        """Write the backlog, if any; raise the failure if records stay unsaved."""
        if self._backlog and not self._broken and self._write(self._backlog, "writing records"):
            self._backlog.clear()
            log.warning("%s: session %s is saved again", self.path, self.session_id)
            self.failure = None
        if self.unsaved:
            assert self.failure is not None
            raise self.failure

    def _fsync_failed(self, exc: OSError) -> None:
        """What was written since the last good fsync may not be on disk: read it back, cut
        it off, and queue it to be written again, so the file stays a durable prefix."""
        unsynced = self._size - self._synced_size
        try:
            again = os.pread(self._fd, unsynced, self._synced_size) if unsynced else b""
            if len(again) != unsynced:
                raise OSError(errno.EIO, "short read of unsynced records")
        except OSError:
            self._broken = True  # cannot requeue what may be lost: stop writing after it
        else:
            self._cut_back(self._synced_size)
            self._backlog[:0] = again
        self.failure = self._fail("fsync", exc)
        raise self.failure

    def _cut_back(self, size: int) -> None:
        """Truncate the file to `size` (a record boundary) after a failed write or fsync."""
        try:
            if os.fstat(self._fd).st_size != size:
                os.ftruncate(self._fd, size)
        except OSError as exc:
            self._broken = True
            log.error(
                "%s: cannot cut a failed write back off (%s); session %s stops writing "
                "(its next load drops the torn last line)",
                self.path,
                _cause(exc),
                self.session_id,
            )
        else:
            self._size = size

    def _fail(self, what: str, exc: OSError) -> JournalWriteError:
        return JournalWriteError(
            self.path, f"session {self.session_id}: {what} failed: {_cause(exc)}", exc.errno
        )


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


def _cause(exc: OSError) -> str:
    """An OS error as `ENOSPC (No space left on device)`: the code a user can search for."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{name} ({text})" if name else text


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
