"""The journal store: the journals under ``<root>/sessions``, one ``<session-id>.jsonl`` each;
create, open (load and repair), list and delete them.

One writer per session: `JournalStore.create` and `JournalStore.open` take
``flock(LOCK_EX | LOCK_NB)`` on the file and a second opener (another process, or this one)
gets `JournalLocked`.

Loading (`JournalStore.open`) is strict about content and forgiving about where the writer
stopped:

- strict: the header must decode and name this session with a known format version; every
  record line must decode against the record union (unknown record types and extra fields on
  `turn/end` or its outcome, such as the legacy ``{"kind":"aborted","reason":"user"}``, are
  errors). Failures raise `JournalCorrupt` naming the file, record and line; nothing is
  half-loaded.
- forgiving: a last line without its newline that does not decode is a torn write and is
  truncated away with a warning (one that decodes is complete and only gets its newline). A turn
  left open by a crash is closed by `acp_server.session.repair`, and the repair records are
  appended and fsynced, so the next load is clean. Then the tool calls of a journal written
  before the agent made its own call ids get unique ones, in memory
  (`acp_server.session.call_ids`).

Import it from `acp_server.session.journal`.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import fcntl
import io
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import msgspec

from . import journal_fs as fs
from .call_ids import unique_call_ids
from .journal_format import (
    JOURNAL_FORMAT,
    JOURNAL_VERSION,
    JournalCorrupt,
    JournalExists,
    JournalHeader,
    JournalLocked,
    JournalNotFound,
    JournalSummary,
    check_session_id,
    is_session_id,
    parse_journal,
    summarize,
)
from .journal_writer import Journal
from .records import BackgroundEnd, Record, TurnEndRecord
from .repair import repair_records

__all__ = ["JournalStore", "LoadedJournal"]

log = logging.getLogger("acp_server.session.journal")
"""One logger for the journal, whichever of its modules speaks (users filter on it)."""

NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS})
"""Filesystems without hard links make `create` fall back to creating the file in place."""


@dataclass(frozen=True, slots=True)
class LoadedJournal:
    """A session loaded by `JournalStore.open`: its records, and its journal open for appending."""

    header: JournalHeader
    records: list[Record]
    """Every record, repair records included, each tool call's id unique in the session."""
    journal: Journal
    repaired: bool
    """True if open turns were closed or open background items ended (the repair records
    are in `records` and on disk)."""
    truncated_bytes: int
    """How many bytes of a torn last line were cut off (0 if none)."""


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
        # os.urandom(6).hex() is secrets.token_hex(6), without importing hmac and hashlib
        # before the first `session/new` is answered.
        tmp = self.sessions_dir / f".{session_id}.{os.urandom(6).hex()}.tmp"
        fd = fs.open_new(tmp)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file nobody else knows of
            fs.write_all(fd, data)
            fs.fsync(fd)
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise JournalExists(
                    f"session {session_id} already has a journal ({path})"
                ) from None
            except OSError as exc:
                if exc.errno not in NO_HARD_LINKS:
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
        fs.fsync_dir(self.sessions_dir)
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
            fs.lock(fd, session_id, path)
            if not fs.still_at(fd, path):
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
                    "%s: closed %d turn(s) a crash left open as interrupted and ended %d "
                    "background item(s) with it (%d repair record(s) appended)",
                    path,
                    sum(1 for record in repairs if isinstance(record, TurnEndRecord)),
                    sum(1 for record in repairs if isinstance(record, BackgroundEnd)),
                    len(repairs),
                )
        except BaseException:
            journal.close()
            raise
        return LoadedJournal(
            header=header,
            records=unique_call_ids(records),
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
            fs.lock(fd, session_id, path)
            if not fs.still_at(fd, path):
                return False
            os.unlink(path)
        finally:
            os.close(fd)
        fs.fsync_dir(self.sessions_dir)
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
        fs.fsync_dir(self.root)

    def _create_in_place(self, session_id: str, path: Path, data: bytes) -> int:
        """`create` without hard links: exclusive-create the journal itself, then lock."""
        try:
            fd = fs.open_new(path)
        except FileExistsError:
            raise JournalExists(f"session {session_id} already has a journal ({path})") from None
        try:
            fs.lock(fd, session_id, path)
            fs.write_all(fd, data)
            fs.fsync(fd)
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
        fs.fsync(fd)
        log.warning(
            "%s: dropped a torn last line (record %d, %d bytes) left by an interrupted write",
            path,
            len(parsed.records) + 1,
            parsed.torn_bytes,
        )
    elif parsed.unterminated:
        fs.write_all(fd, b"\n")
        fs.fsync(fd)
        log.warning("%s: the last record had no newline; added it", path)
    return parsed.header, parsed.records, parsed.torn_bytes
