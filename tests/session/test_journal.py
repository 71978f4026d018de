"""The session journal (acp_server/session/journal.py): every record type round-trips through
create, append and open, a session is created once (with or without hard links), and ten
thousand records load. Its parts: test_journal_writer.py, test_journal_store.py,
test_journal_format.py and test_repair.py beside this file."""

from __future__ import annotations

import errno
import json
import os

import pytest

from acp_server.session.journal import (
    JOURNAL_VERSION,
    JournalExists,
    JournalLocked,
    JournalStore,
)
from acp_server.session.records import (
    Aborted,
    AssistantMessage,
    InterruptedOutcome,
    Record,
    ToolResult,
    TurnEndRecord,
    TurnStart,
    encode_record,
)
from tests.support.journal_files import (
    AT,
    EVERY_RECORD,
    complete_turn,
    header,
    write_session,
)

# --- creating and round trips -----------------------------------------------------------------


def test_created_journal_starts_with_the_header_line(store: JournalStore) -> None:
    path = write_session(store, [TurnStart(turn_id="t1", at=AT)])
    assert path == store.root / "sessions" / "s1.jsonl"
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[0]) == {
        "format": "acp-server-session",
        "version": 1,
        "session_id": "s1",
        "cwd": "/work/project",
        "created_at": AT,
        "additional_directories": [],
        "parent_session_id": None,
        "parent_tool_call_id": None,
        "forked_from": None,
        "forked_at_turn": None,
    }
    assert lines[1:] == [encode_record(TurnStart(turn_id="t1", at=AT)), b""]
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(store.sessions_dir)) == ["s1.jsonl"]  # no temporary file left


def test_header_fields_survive_open(store: JournalStore) -> None:
    created = header(
        "sub-1",
        additional_directories=["/a", "/b"],
        parent_session_id="s1",
        parent_tool_call_id="call-7",
    )
    store.create(created).close()
    loaded = store.open("sub-1")
    assert loaded.header == created
    assert loaded.header.version == JOURNAL_VERSION
    assert loaded.records == []
    loaded.journal.close()


def test_every_record_type_survives_create_append_open(store: JournalStore) -> None:
    write_session(store, EVERY_RECORD)
    loaded = store.open("s1")
    try:
        assert loaded.records == EVERY_RECORD
        assert [type(r) for r in loaded.records] == [type(r) for r in EVERY_RECORD]
        assert not loaded.repaired
        assert loaded.truncated_bytes == 0
    finally:
        loaded.journal.close()


def test_tool_result_title_and_kind_are_left_out_when_unset() -> None:
    bare = json.loads(
        encode_record(ToolResult(turn_id="t", call_id="c", status="completed", output="", at=AT))
    )
    assert "title" not in bare and "kind" not in bare
    shown = json.loads(
        encode_record(
            ToolResult(
                turn_id="t",
                call_id="c",
                status="completed",
                output="",
                title="Edit a.py",
                kind="edit",
                at=AT,
            )
        )
    )
    assert (shown["title"], shown["kind"]) == ("Edit a.py", "edit")


def test_appends_after_open_are_kept(store: JournalStore) -> None:
    write_session(store, complete_turn("t1"))
    loaded = store.open("s1")
    loaded.journal.append(TurnStart(turn_id="t2", at=AT))
    loaded.journal.append(TurnEndRecord(turn_id="t2", outcome=Aborted(), at=AT))
    loaded.journal.close()
    again = store.open("s1")
    assert again.records == [
        *complete_turn("t1"),
        TurnStart(turn_id="t2", at=AT),
        TurnEndRecord(turn_id="t2", outcome=Aborted(), at=AT),
    ]
    again.journal.close()


def test_create_refuses_an_existing_session(store: JournalStore) -> None:
    write_session(store, [])
    with pytest.raises(JournalExists, match="s1"):
        store.create(header("s1"))
    assert sorted(os.listdir(store.sessions_dir)) == ["s1.jsonl"]


def test_create_works_without_hard_links(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_link(src: object, dst: object) -> None:
        raise PermissionError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(os, "link", no_link)
    journal = store.create(header("s1"))
    journal.append(TurnStart(turn_id="t1", at=AT))
    with pytest.raises(JournalLocked):
        JournalStore(store.root).open("s1")
    journal.close()
    assert sorted(os.listdir(store.sessions_dir)) == ["s1.jsonl"]
    loaded = store.open("s1")
    assert loaded.header == header("s1")
    assert loaded.repaired  # the open turn t1 was closed
    loaded.journal.close()
    with pytest.raises(JournalExists):
        store.create(header("s1"))


# --- size -------------------------------------------------------------------------------------


def test_ten_thousand_records_load_correctly(store: JournalStore) -> None:
    records: list[Record] = []
    for turn in range(10_000 // 6 + 1):
        records.extend(complete_turn(f"t{turn}", f"prompt {turn}"))
    records = records[:10_000]
    assert isinstance(records[-1], AssistantMessage)  # mid-turn: the load repairs it
    path = write_session(store, records)
    loaded = store.open("s1")
    assert loaded.records[:10_000] == records
    assert len(loaded.records) == 10_001
    assert loaded.records[-1] == TurnEndRecord(
        turn_id=records[-1].turn_id, outcome=InterruptedOutcome(), at=loaded.records[-1].at
    )
    loaded.journal.close()
    assert len(path.read_bytes().splitlines()) == 10_002
