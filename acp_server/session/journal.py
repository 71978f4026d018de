"""The session journal: one append-only JSONL file per session, crash-safe and single-writer.

Layout: ``<root>/sessions/<session-id>.jsonl``. Line 1 is a `JournalHeader`; every further line
is one record of `acp_server.session.records`, encoded with the shared encoder. The journal is
three modules and a format, all imported from here:

- `acp_server.session.journal_writer`: `Journal`, one session's open file (one write per
  record, fsync at turn end, a failed write cut back and kept in memory);
- `acp_server.session.journal_store`: `JournalStore`, the journals of a data directory (create,
  open with its load and crash repair, list, delete), one writer per session;
- `acp_server.session.journal_fs`: the file operations under both (write, fsync, lock);
- `acp_server.session.journal_format`: the header, the errors, parsing and summaries.

See docs/rfc/implemented/architecture/2026-11-30-session-journal.md.
"""

from __future__ import annotations

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
)
from .journal_store import JournalStore, LoadedJournal
from .journal_writer import Journal

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
