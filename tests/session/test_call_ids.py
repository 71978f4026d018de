"""Tool-call ids unique within a session on load, for journals written before the agent made its
own: a model id reused in two turns or twice in one response gets a fresh id for its later
calls (the model's kept beside it), each result follows its own call, the journal on disk is
left as written, the same ids come back at every load, the id each call was written with is
known again, and rewind sees each call as itself (replay: tests/acp/test_replay.py)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from acp_server.session import records as rec
from acp_server.session.call_ids import unique_call_ids, written_call_id
from acp_server.session.journal import JournalHeader, JournalStore
from acp_server.session.rewind import changes_since
from tests.support.legacy_calls import AT, LEGACY, asked, call, result, turn

# What a local server that numbers its calls per response made the agent journal: `call_1` in
# two turns, and `call_1` twice in one response.


def calls_of(records: list[rec.Record]) -> list[rec.ToolCallRecord]:
    return [c for r in records if isinstance(r, rec.AssistantMessage) for c in r.tool_calls]


def test_a_reused_model_id_gets_fresh_ids_and_each_result_follows_its_call() -> None:
    fixed = unique_call_ids(LEGACY)
    calls = calls_of(fixed)
    assert [c.call_id for c in calls] == ["call_1", "call_1~2", "call_1~3", "call_1~4"]
    assert [c.model_call_id for c in calls] == [None, "call_1", "call_1", "call_1"]
    outputs = {r.call_id: r.output for r in fixed if isinstance(r, rec.ToolResult)}
    assert outputs == {
        "call_1": "alpha",
        "call_1~2": "a.txt",
        "call_1~3": "beta",
        "call_1~4": "a.txt b.txt",
    }


def test_the_written_id_of_each_call_is_known_after_load() -> None:
    """A subagent's journal names its parent's call by the id written in the parent's journal,
    so the pairing on load needs it back (tests/acp/test_child_sessions.py)."""
    written = [written_call_id(c) for c in calls_of(unique_call_ids(LEGACY))]
    assert written == ["call_1"] * 4
    ours = rec.ToolCallRecord(call_id="call_ab", model_call_id="call_1", name="x", arguments={})
    assert written_call_id(ours) == "call_ab"
    odd = rec.ToolCallRecord(call_id="call_1~x", model_call_id="call_1", name="x", arguments={})
    assert written_call_id(odd) == "call_1~x"


def test_unique_ids_come_back_as_they_were() -> None:
    fresh = [
        *turn(
            "t1",
            asked(
                "t1",
                rec.ToolCallRecord(
                    call_id="call_ab", model_call_id="call_1", name="x", arguments={}
                ),
            ),
            result("t1", "call_ab", "x", "other", "out"),
        )
    ]
    assert all(a is b for a, b in zip(unique_call_ids(fresh), fresh, strict=True))


def test_an_id_the_journal_already_holds_is_not_given_again() -> None:
    records = [
        *LEGACY[:8],  # turns t1 and t2: `call_1` twice
        *turn("t9", asked("t9", call("call_1~2", "bash")), result("t9", "call_1~2", "b", "x", "")),
    ]
    ids = [c.call_id for c in calls_of(unique_call_ids(records))]
    assert ids == ["call_1", "call_1~3", "call_1~2"]


def test_the_same_ids_come_back_at_every_load_and_after_new_records() -> None:
    once = unique_call_ids(LEGACY)
    assert unique_call_ids(once) == once
    later = [
        *LEGACY,
        *turn(
            "t4",
            asked(
                "t4",
                rec.ToolCallRecord(
                    call_id="call_0001", model_call_id="call_1", name="x", arguments={}
                ),
            ),
            result("t4", "call_0001", "x", "other", ""),
        ),
    ]
    assert unique_call_ids(later)[: len(once)] == once


def test_a_model_reusing_one_id_many_times_costs_its_length() -> None:
    many = [asked("t1", *(call("call_1", "bash") for _ in range(5000)))]
    many += [result("t1", "call_1", "b", "execute", str(n)) for n in range(5000)]
    fixed = unique_call_ids(many)
    ids = [c.call_id for c in calls_of(fixed)]
    assert len(set(ids)) == 5000
    outputs = [r.output for r in fixed if isinstance(r, rec.ToolResult)]
    assert [r.call_id for r in fixed if isinstance(r, rec.ToolResult)] == ids
    assert outputs == [str(n) for n in range(5000)]


def test_rewind_finds_each_file_call_of_a_legacy_journal() -> None:
    # Two writes journaled before checkpoints were kept, in one response, under one model id:
    # each is a change the rewind names by its own path.
    records = turn(
        "t1",
        asked(
            "t1",
            call("call_1", "write_file", path="a.txt"),
            call("call_1", "write_file", path="b.txt"),
        ),
        result("t1", "call_1", "Write a.txt", "edit", "ok"),
        result("t1", "call_1", "Write b.txt", "edit", "ok"),
    )
    changes = changes_since(unique_call_ids(records), "t1")
    assert [(f.path, f.calls) for f in changes.files] == [
        ("a.txt", ["call_1"]),
        ("b.txt", ["call_1~2"]),
    ]


def test_loading_a_legacy_journal_gives_unique_ids_and_leaves_the_file_as_written(
    tmp_path: Path,
) -> None:
    store = JournalStore(tmp_path)
    journal = store.create(JournalHeader(session_id="s1", cwd="/w", created_at=AT))
    for record in LEGACY:
        journal.append(record)
    journal.close()
    written = store.path_for("s1").read_bytes()
    assert b"model_call_id" not in written  # today's format: the model's ids only
    loaded = store.open("s1")
    loaded.journal.close()
    ids = [c.call_id for c in calls_of(loaded.records)]
    assert len(set(ids)) == 4
    assert store.path_for("s1").read_bytes() == written
    again = store.open("s1")
    again.journal.close()
    assert [c.call_id for c in calls_of(again.records)] == ids
    assert msgspec.json.encode(again.records) == msgspec.json.encode(loaded.records)
