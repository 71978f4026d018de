"""Loading a journal (acp_server/session/journal_format.py): a torn last line is truncated with a
warning, a complete record without its newline kept, anything else damaged, unknown or legacy
is a strict error naming the line, and a bad or missing header fails the load. `turn/end`'s own
strictness: tests/session/test_turn_end_strict.py."""

from __future__ import annotations

import logging

import pytest

from acp_server.session.journal import (
    JournalCorrupt,
    JournalNotFound,
    JournalStore,
    JournalVersionError,
)
from acp_server.session.records import (
    Aborted,
    Completed,
    TurnEndRecord,
    TurnStart,
    encode_record,
)
from tests.support.journal_files import (
    AT,
    append_raw,
    complete_turn,
    prompt,
    write_session,
)

# --- strict and forgiving loading -------------------------------------------------------------


def test_a_torn_last_line_is_truncated_with_a_warning(
    store: JournalStore, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_session(store, complete_turn("t1"))
    size = path.stat().st_size
    torn = encode_record(TurnStart(turn_id="t2", at=AT))[:17]
    append_raw(path, torn)
    with caplog.at_level(logging.WARNING, logger="acp_server.session.journal"):
        loaded = store.open("s1")
    assert loaded.records == complete_turn("t1")
    assert loaded.truncated_bytes == len(torn) == 17
    assert not loaded.repaired
    assert path.stat().st_size == size
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert str(path) in warning.getMessage()
    assert "17 bytes" in warning.getMessage()
    loaded.journal.append(TurnStart(turn_id="t2", at=AT))
    loaded.journal.append(TurnEndRecord(turn_id="t2", outcome=Completed(), at=AT))
    loaded.journal.close()
    again = store.open("s1")
    assert again.records[-2:] == [
        TurnStart(turn_id="t2", at=AT),
        TurnEndRecord(turn_id="t2", outcome=Completed(), at=AT),
    ]
    again.journal.close()


def test_a_complete_record_missing_only_its_newline_is_kept(store: JournalStore) -> None:
    path = write_session(store, [])
    append_raw(path, encode_record(TurnStart(turn_id="t1", at=AT)))
    loaded = store.open("s1")
    assert loaded.truncated_bytes == 0
    assert loaded.records[0] == TurnStart(turn_id="t1", at=AT)
    loaded.journal.close()
    assert store.open("s1").records[:1] == [TurnStart(turn_id="t1", at=AT)]


def test_a_complete_but_invalid_last_line_is_a_strict_error(store: JournalStore) -> None:
    path = write_session(store, complete_turn("t1"))
    append_raw(path, b'{"type":"turn/start","at":"x"}\n')
    before = path.read_bytes()
    with pytest.raises(JournalCorrupt) as failed:
        store.open("s1")
    error = failed.value
    assert (error.path, error.record, error.line) == (path, 7, 8)
    assert str(error).startswith(f"{path}: record 7 (line 8): ")
    assert "turn_id" in str(error)
    assert path.read_bytes() == before  # nothing truncated or repaired
    with pytest.raises(JournalCorrupt):  # not JournalLocked: the failed load let go
        store.open("s1")


def test_damage_before_the_last_line_is_a_strict_error(store: JournalStore) -> None:
    path = write_session(store, complete_turn("t1"))
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3][:10]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalCorrupt, match=r"record 3 \(line 4\)") as failed:
        store.open("s1")
    assert str(path) in str(failed.value)


def test_the_legacy_reason_bearing_aborted_outcome_fails_the_load(store: JournalStore) -> None:
    path = write_session(store, [TurnStart(turn_id="t1", at=AT), prompt("go")])
    append_raw(
        path,
        b'{"type":"turn/end","turn_id":"t1","outcome":{"kind":"aborted","reason":"user"},'
        b'"at":"2026-11-30T04:05:06.123Z"}\n',
    )
    with pytest.raises(JournalCorrupt) as failed:
        store.open("s1")
    assert failed.value.record == 3
    assert str(failed.value).startswith(f"{path}: record 3 (line 4): ")
    assert "reason" in str(failed.value)


def test_the_coarse_aborted_outcome_loads(store: JournalStore) -> None:
    path = write_session(store, [TurnStart(turn_id="t1", at=AT), prompt("go")])
    append_raw(
        path,
        b'{"type":"turn/end","turn_id":"t1","outcome":{"kind":"aborted"},'
        b'"at":"2026-11-30T04:05:06.123Z"}\n',
    )
    loaded = store.open("s1")
    assert loaded.records[-1] == TurnEndRecord(turn_id="t1", outcome=Aborted(), at=AT)
    assert not loaded.repaired
    loaded.journal.close()


def test_an_unknown_record_type_fails_the_load(store: JournalStore) -> None:
    path = write_session(store, complete_turn("t1"))
    append_raw(path, b'{"type":"turn/paused","turn_id":"t1","at":"x"}\n')
    append_raw(path, encode_record(TurnStart(turn_id="t2", at=AT)) + b"\n")
    with pytest.raises(JournalCorrupt, match=r"record 7 \(line 8\).*turn/paused"):
        store.open("s1")


@pytest.mark.parametrize(
    ("first_line", "error", "message"),
    [
        (b"", JournalCorrupt, "header"),
        (b'{"type":"journal/header","format":1}', JournalCorrupt, "not an acp-server session"),
        (b'{"format":"other","version":1}', JournalCorrupt, "unknown journal format"),
        (
            b'{"format":"acp-server-session","version":2,"session_id":"s1"}',
            JournalVersionError,
            "version 2 is newer",
        ),
        (
            b'{"format":"acp-server-session","version":1,"session_id":"other","cwd":"/",'
            b'"created_at":"x"}',
            JournalCorrupt,
            "names session 'other'",
        ),
        (b'{"format":"acp-server-session","version":1}', JournalCorrupt, "session_id"),
    ],
)
def test_a_bad_header_fails_the_load(
    store: JournalStore, first_line: bytes, error: type[JournalCorrupt], message: str
) -> None:
    store.sessions_dir.mkdir(parents=True)
    path = store.path_for("s1")
    path.write_bytes(first_line + b"\n" + encode_record(TurnStart(turn_id="t1", at=AT)) + b"\n")
    with pytest.raises(error, match=message) as failed:
        store.open("s1")
    assert failed.value.record == 0 and failed.value.line == 1
    assert str(failed.value).startswith(f"{path}: header (line 1): ")


def test_an_empty_or_headerless_file_fails_the_load(store: JournalStore) -> None:
    store.sessions_dir.mkdir(parents=True)
    path = store.path_for("s1")
    path.write_bytes(b"")
    with pytest.raises(JournalCorrupt, match="empty"):
        store.open("s1")
    path.write_bytes(b'{"format":"acp-server-ses')
    with pytest.raises(JournalCorrupt, match="header line is incomplete"):
        store.open("s1")
    assert path.read_bytes() == b'{"format":"acp-server-ses'  # a torn header is not truncated


def test_opening_an_unknown_session_is_not_found(store: JournalStore) -> None:
    with pytest.raises(JournalNotFound, match="nope"):
        store.open("nope")
