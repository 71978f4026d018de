"""The journal's on-disk format and its errors: the header, parsing a whole file, summaries.

Pure reading only (no locks, no writes): `acp_server.session.journal` does the file handling
and re-exports everything public here, so import from there.

A journal is one JSONL file: line 1 is a `JournalHeader`, every further line one record of
`acp_server.session.records`. `parse_journal` is strict about content: the header must be ours,
of a version we read, and name the session; every complete record line must decode against the
record union (unknown record types, and extra fields on `turn/end` or its outcome such as the legacy
``{"kind":"aborted","reason":"user"}``, are errors). It reports, rather than fixes, an
unterminated last line, which the journal store then truncates (torn) or terminates (complete).
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import msgspec

from .records import RECORD_DECODER, Record, TextPart, UserMessage

__all__ = [
    "JOURNAL_FORMAT",
    "JOURNAL_VERSION",
    "JournalCorrupt",
    "JournalError",
    "JournalExists",
    "JournalHeader",
    "JournalLocked",
    "JournalNotFound",
    "JournalSummary",
    "JournalVersionError",
    "JournalWriteError",
    "ParsedJournal",
    "check_session_id",
    "decode_header",
    "is_session_id",
    "parse_journal",
    "summarize",
]

JOURNAL_FORMAT: Final = "acp-server-session"
"""The ``format`` of every journal header: marks the file as ours."""

JOURNAL_VERSION: Final = 1
"""The journal format version this code writes and the newest it reads."""

_SESSION_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}")

# Our encoder writes the tag first and compact, so a user message line starts with this.
_USER_MESSAGE_PREFIX = b'{"type":"message/user"'

_TAIL_WINDOW = 64 * 1024


# --- errors -----------------------------------------------------------------------------------


class JournalError(Exception):
    """Base class of every journal error."""


class JournalNotFound(JournalError):
    """No journal exists for that session id."""


class JournalExists(JournalError):
    """`JournalStore.create` found a journal for that session id already."""


class JournalLocked(JournalError):
    """The session is open for writing elsewhere (another process, or already in this one)."""


class JournalWriteError(JournalError):
    """Writing or fsyncing the journal failed: records are not saved (yet). `errno` is the
    operating system's error number, when there is one (ENOSPC, EIO, EROFS, ...)."""

    def __init__(self, path: Path, message: str, errno: int | None = None) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.errno = errno


class JournalCorrupt(JournalError):
    """The journal does not load: names the file, the record and its line.

    ``record`` counts the lines after the header from 1 (0 is the header itself); ``line`` is
    the 1-based line number in the file (``record + 1``). ``detail`` is the bare reason.
    """

    def __init__(self, path: Path, record: int, message: str) -> None:
        where = "header (line 1)" if record == 0 else f"record {record} (line {record + 1})"
        super().__init__(f"{path}: {where}: {message}")
        self.path = path
        self.record = record
        self.line = record + 1
        self.detail = message


class JournalVersionError(JournalCorrupt):
    """The journal was written in a newer format version than this code reads."""


# --- session ids ------------------------------------------------------------------------------


def is_session_id(session_id: str) -> bool:
    """Whether `session_id` is safe as a file name (see `check_session_id`)."""
    return _SESSION_ID.fullmatch(session_id) is not None


def check_session_id(session_id: str) -> str:
    """Return `session_id` if it is safe as a file name, else raise ValueError.

    Allowed: 1 to 200 of ``A-Z a-z 0-9 _ . -``, not starting with a dot (so no path separators,
    no ``..``, no hidden files). Session ids come from clients: never trust them as paths.
    """
    if not isinstance(session_id, str) or not is_session_id(session_id):
        raise ValueError(f"invalid session id {session_id!r}")
    return session_id


# --- header -----------------------------------------------------------------------------------


class JournalHeader(msgspec.Struct, frozen=True, kw_only=True):
    """Line 1 of a journal: what the session is, written once at creation.

    Every field is always written (no ``omit_defaults``), so the header is self-describing.
    """

    format: Literal["acp-server-session"] = JOURNAL_FORMAT
    version: int = JOURNAL_VERSION
    session_id: str
    cwd: str
    created_at: str
    """When the session was created, as `acp_server.session.records.utc_now` writes it."""
    additional_directories: list[str] = []
    parent_session_id: str | None = None
    """For a subagent's session: the session of the agent that spawned it."""
    parent_tool_call_id: str | None = None
    """For a subagent's session: the parent's tool call that spawned it."""
    forked_from: str | None = None
    """For a forked session (`session/fork`): the session whose history it was copied from."""
    forked_at_turn: str | None = None
    """For a forked session: the source's last ended turn that the copy goes up to (None when
    the source had no turn yet)."""


class _HeaderProbe(msgspec.Struct):
    """Just enough of a header to refuse a foreign file or a newer version before the rest."""

    format: str
    version: int


class _LastAt(msgspec.Struct):
    at: str | None = None


_PROBE_DECODER = msgspec.json.Decoder(_HeaderProbe)
_HEADER_DECODER = msgspec.json.Decoder(JournalHeader)
_LAST_AT_DECODER = msgspec.json.Decoder(_LastAt)


def decode_header(path: Path, line: bytes) -> JournalHeader:
    """Decode a header line; `JournalCorrupt` (or `JournalVersionError`) naming `path` if it is
    not ours, of a newer version, or malformed."""
    try:
        probe = _PROBE_DECODER.decode(line)
    except msgspec.DecodeError as exc:
        raise JournalCorrupt(path, 0, f"not an acp-server session journal: {exc}") from None
    if probe.format != JOURNAL_FORMAT:
        raise JournalCorrupt(path, 0, f"unknown journal format {probe.format!r}")
    if probe.version > JOURNAL_VERSION:
        raise JournalVersionError(
            path,
            0,
            f"journal format version {probe.version} is newer than this acp-server reads "
            f"(up to {JOURNAL_VERSION}); upgrade acp-server to load it",
        )
    if probe.version < 1:
        raise JournalCorrupt(path, 0, f"invalid journal format version {probe.version}")
    try:
        return _HEADER_DECODER.decode(line)
    except msgspec.DecodeError as exc:
        raise JournalCorrupt(path, 0, str(exc)) from None


# --- parsing a whole journal ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParsedJournal:
    """A journal file decoded by `parse_journal`, with what its unterminated tail needs."""

    header: JournalHeader
    records: list[Record]
    """Every decoded record, including an unterminated last one that decodes."""
    torn_bytes: int
    """Length of an unterminated last line that does not decode: a torn write, to truncate."""
    unterminated: bool
    """The last record decoded but has no newline: it needs one before the next append."""


def parse_journal(path: Path, session_id: str, data: bytes) -> ParsedJournal:
    """Decode a whole journal file's bytes; `JournalCorrupt` on any damage that is not a torn
    last line. `path` only names the file in errors."""
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: b"" unless the last line is unterminated
    if not lines:
        raise JournalCorrupt(
            path, 0, "the header line is incomplete" if tail else "the file is empty"
        )
    header = decode_header(path, lines[0])
    if header.session_id != session_id:
        raise JournalCorrupt(
            path, 0, f"the header names session {header.session_id!r}, not {session_id!r}"
        )
    records: list[Record] = []
    append = records.append
    decode = RECORD_DECODER.decode
    for index in range(1, len(lines)):
        try:
            append(decode(lines[index]))
        except msgspec.DecodeError as exc:
            raise JournalCorrupt(path, index, str(exc)) from None
    if not tail:
        return ParsedJournal(header=header, records=records, torn_bytes=0, unterminated=False)
    try:
        append(decode(tail))
    except msgspec.DecodeError:
        return ParsedJournal(
            header=header, records=records, torn_bytes=len(tail), unterminated=False
        )
    return ParsedJournal(header=header, records=records, torn_bytes=0, unterminated=True)


# --- summaries --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JournalSummary:
    """What `JournalStore.list` tells about one session without loading it."""

    session_id: str
    cwd: str
    additional_directories: list[str]
    created_at: str
    updated_at: str
    """The ``at`` of the last complete record, or ``created_at`` if there is none."""
    first_prompt_text: str | None
    """The text parts of the first prompt joined, or None if the session has no prompt yet."""
    path: Path
    parent_session_id: str | None = None
    """Set for a subagent's session (callers may leave those out of a listing)."""


def summarize(session_id: str, path: Path) -> JournalSummary:
    """Summarize one journal cheaply: the header, the first prompt line and the last complete
    line are decoded, nothing else. `JournalCorrupt` if the header does not load."""
    with open(path, "rb") as file:
        header_line = file.readline()
        if not header_line.endswith(b"\n"):
            raise JournalCorrupt(path, 0, "the header line is incomplete")
        header = decode_header(path, header_line)
        if header.session_id != session_id:
            raise JournalCorrupt(path, 0, f"the header names session {header.session_id!r}")
        first_prompt: str | None = None
        for line in file:
            if not line.startswith(_USER_MESSAGE_PREFIX) or not line.endswith(b"\n"):
                continue
            try:
                record = RECORD_DECODER.decode(line)
            except msgspec.DecodeError:
                continue
            if isinstance(record, UserMessage) and record.origin == "prompt":
                first_prompt = "".join(
                    part.text for part in record.content if isinstance(part, TextPart)
                )
                break
        last = _last_complete_line(file, len(header_line), os.fstat(file.fileno()).st_size)
    updated_at: str | None = None
    if last is not None:
        try:
            updated_at = _LAST_AT_DECODER.decode(last).at
        except msgspec.DecodeError:
            updated_at = None
    return JournalSummary(
        session_id=session_id,
        cwd=header.cwd,
        additional_directories=header.additional_directories,
        created_at=header.created_at,
        updated_at=updated_at or header.created_at,
        first_prompt_text=first_prompt,
        path=path,
        parent_session_id=header.parent_session_id,
    )


def _last_complete_line(file: io.BufferedReader, start: int, size: int) -> bytes | None:
    """The last newline-terminated line at or after offset `start`, without its newline.

    Reads backwards from the end in a growing window, so a long session costs one small read.
    """
    window = _TAIL_WINDOW
    while True:
        pos = max(start, size - window)
        file.seek(pos)
        chunk = file.read(size - pos)
        end = chunk.rfind(b"\n")
        if end < 0 and pos == start:
            return None
        begin = chunk.rfind(b"\n", 0, max(end, 0)) + 1
        if end >= 0 and (begin > 0 or pos == start):
            return chunk[begin:end]
        window *= 4
