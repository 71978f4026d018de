"""Crash repair (acp_server/session/repair.py): every turn a dead process left open is closed
once, its calls without a result given an `outcome_unknown` one, background items left running
ended with an unknown outcome, and a turn without calls ended `interrupted`."""

from __future__ import annotations

import os

import pytest

from acp_server.session import journal_fs
from acp_server.session.journal import (
    JournalStore,
)
from acp_server.session.records import (
    AssistantMessage,
    InterruptedOutcome,
    Record,
    StepStart,
    TextPart,
    ToolCallRecord,
    ToolResult,
    TurnEndRecord,
    TurnStart,
    encode_record,
)
from acp_server.session.repair import OUTCOME_UNKNOWN_OUTPUT
from tests.support.journal_files import (
    AT,
    append_raw,
    complete_turn,
    prompt,
    write_session,
)

# --- crash repair -----------------------------------------------------------------------------


def test_an_open_turn_is_closed_once_with_outcome_unknown_results(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashed: list[Record] = [
        *complete_turn("t0"),
        TurnStart(turn_id="t1", at=AT),
        prompt("edit things"),
        StepStart(turn_id="t1", step=1, at=AT),
        AssistantMessage(
            turn_id="t1",
            message_id="a1",
            parts=[TextPart(text="on it")],
            tool_calls=[
                ToolCallRecord(call_id="c1", name="read_file", arguments={}),
                ToolCallRecord(call_id="c2", name="edit_file", arguments={}),
                ToolCallRecord(call_id="c3", name="bash", arguments={}),
            ],
            at=AT,
        ),
        ToolResult(turn_id="t1", call_id="c1", status="completed", output="text", at=AT),
    ]
    path = write_session(store, crashed)
    append_raw(path, b'{"type":"tool/result","turn_id":"t1","call_id":"c2","sta')  # torn
    synced: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(journal_fs, "F_FULLFSYNC", None)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    loaded = store.open("s1")
    assert loaded.repaired
    assert loaded.truncated_bytes > 0
    repairs = loaded.records[len(crashed) :]
    assert len(repairs) == 3
    for call_id, result in zip(["c2", "c3"], repairs[:2], strict=True):
        assert isinstance(result, ToolResult)
        assert (result.turn_id, result.call_id, result.status, result.synthetic) == (
            "t1",
            call_id,
            "failed",
            "outcome_unknown",
        )
        assert result.output == OUTCOME_UNKNOWN_OUTPUT
        assert result.output.startswith("outcome unknown")
    end = repairs[2]
    assert isinstance(end, TurnEndRecord)
    assert (end.turn_id, end.outcome) == ("t1", InterruptedOutcome())
    fsyncs_after_load = len(synced)
    assert fsyncs_after_load >= 2  # the truncation, then the repair
    loaded.journal.close()

    again = store.open("s1")
    assert not again.repaired
    assert again.truncated_bytes == 0
    assert again.records == loaded.records
    again.journal.close()
    on_disk = path.read_bytes().split(b"\n")
    assert on_disk[-1] == b""
    assert on_disk[-4:-1] == [encode_record(record) for record in repairs]


def test_background_items_left_running_end_once_with_an_unknown_outcome(
    store: JournalStore,
) -> None:
    # Between turns, with no turn open: an item the dead process started and never ended is
    # ended by repair; one that ended is left as it is.
    from acp_server.session.records import BackgroundEnd, BackgroundStart

    crashed: list[Record] = [
        *complete_turn("t0"),
        BackgroundStart(item="bg_1", call_id="c1", command="python -m http.server", at=AT),
        BackgroundStart(item="bg_2", call_id="c2", command="make", at=AT),
        BackgroundEnd(item="bg_2", how="exited", exit_code=0, at=AT),
    ]
    write_session(store, crashed)
    loaded = store.open("s1")
    assert loaded.repaired
    assert [r for r in loaded.records[len(crashed) :]] == [
        BackgroundEnd(item="bg_1", how="unknown", at=loaded.records[-1].at)
    ]
    loaded.journal.close()
    again = store.open("s1")
    assert not again.repaired and again.records == loaded.records
    again.journal.close()


def test_an_open_turn_without_tool_calls_just_ends_interrupted(store: JournalStore) -> None:
    write_session(store, [TurnStart(turn_id="t1", at=AT), prompt("hi")])
    loaded = store.open("s1")
    assert loaded.repaired
    [end] = loaded.records[2:]
    assert isinstance(end, TurnEndRecord) and end.outcome == InterruptedOutcome()
    loaded.journal.close()
