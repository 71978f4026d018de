"""The journal writer: one session's open, append-only journal file, holding its write lock.

Each record goes out, newline included, in one ``os.write`` on an ``O_APPEND`` descriptor, so a
crash can only tear the last line. `Journal.sync` / `Journal.flush` fsync (the caller does it
at turn end); `Journal.close` fsyncs too. A failed write (disk full, I/O error, read-only file
system) is cut back off the file, and the records from it on wait in memory until a flush can
write them: the file never holds a torn line followed by more records, and `Journal.unsaved`
and the flush's `JournalWriteError` tell the caller that acknowledged work is not on disk.
`acp_server.session.journal_store` makes writers; import both from `acp_server.session.journal`.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import anyio.to_thread

from . import journal_fs as fs
from .journal_format import JournalWriteError
from .records import RECORD_ENCODER, Record

__all__ = ["Journal"]

log = logging.getLogger("acp_server.session.journal")
"""One logger for the journal, whichever of its modules speaks (users filter on it)."""


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
            fs.fsync(self._fd)
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
            await anyio.to_thread.run_sync(fs.fsync_and_close, fd)
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
            fs.write_all(self._fd, data)
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
                    fs.cause(exc),
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
                fs.cause(exc),
                self.session_id,
            )
        else:
            self._size = size

    def _fail(self, what: str, exc: OSError) -> JournalWriteError:
        return JournalWriteError(
            self.path, f"session {self.session_id}: {what} failed: {fs.cause(exc)}", exc.errno
        )
