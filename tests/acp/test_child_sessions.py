"""Which journaled child follows which `task` call on `session/load`
(acp_server/acp/child_sessions.py, `child_histories`), with a real journal store: children of a
journal written before the agent made its own call ids, which all name the reused `call_1`,
follow the parent's `task` calls of that id in the order they were created; a call that had
ended before a child was created (it started none) is skipped; a child naming an id of ours
follows that call. The rest (announced, linked, their own updates, cancelled alone, and a legacy
journal loaded by a client): tests/e2e/test_child_sessions_acp.py."""

from __future__ import annotations

from pathlib import Path

from acp_server.acp.child_sessions import child_histories
from acp_server.session import records as rec
from acp_server.session.journal import JournalHeader, JournalStore


def at(second: int) -> str:
    return f"2026-12-01T00:00:{second:02d}.000Z"


def task_turn(turn_id: str, calls: list[rec.ToolCallRecord], start: int) -> list[rec.Record]:
    """A turn asking for `calls` at second `start`; their results come a second later each."""
    return [
        rec.TurnStart(turn_id=turn_id, at=at(start)),
        rec.AssistantMessage(
            turn_id=turn_id, message_id=f"m_{turn_id}", parts=[], tool_calls=calls, at=at(start)
        ),
        *(
            rec.ToolResult(
                turn_id=turn_id,
                call_id=c.call_id,
                status="completed",
                output="",
                title=c.call_id,
                kind="think",
                at=at(start + 1 + n),
            )
            for n, c in enumerate(calls)
        ),
        rec.TurnEndRecord(turn_id=turn_id, outcome=rec.Completed(), at=at(start + 9)),
    ]


def task(call_id: str, model_call_id: str | None = None) -> rec.ToolCallRecord:
    return rec.ToolCallRecord(
        call_id=call_id, model_call_id=model_call_id, name="task", arguments={"prompt": "p"}
    )


def write(store: JournalStore, records: list[rec.Record], children: list[tuple[str, int]]) -> None:
    """The parent `old` and, for each (parent call id, second), a child `old.task<N>`."""
    journal = store.create(JournalHeader(session_id="old", cwd="/ws", created_at=at(0)))
    for record in records:
        journal.append(record)
    journal.close()
    for number, (call_id, second) in enumerate(children, start=1):
        header = JournalHeader(
            session_id=f"old.task{number}",
            cwd="/ws",
            created_at=at(second),
            parent_session_id="old",
            parent_tool_call_id=call_id,
        )
        store.create(header).close()


def children_by_call(store: JournalStore) -> dict[str, str]:
    loaded = store.open("old")
    loaded.journal.close()
    found = child_histories(store, "old", loaded.records)
    return {call_id: history.session_id for call_id, history in found.items()}


def test_children_of_one_reused_id_follow_its_calls_in_the_order_they_were_created(
    tmp_path: Path,
) -> None:
    store = JournalStore(tmp_path)
    records = [
        *task_turn("t1", [task("call_1")], 10),
        *task_turn("t2", [task("call_1"), task("call_1")], 20),  # twice in one response
    ]
    # Created in the same second within t2: the child's number orders them.
    write(store, records, [("call_1", 10), ("call_1", 20), ("call_1", 20)])
    assert children_by_call(store) == {
        "call_1": "old.task1",
        "call_1~2": "old.task2",
        "call_1~3": "old.task3",
    }


def test_a_task_call_that_had_ended_before_the_child_started_is_skipped(tmp_path: Path) -> None:
    """The first `call_1` was refused (no child); the one child belongs to the second."""
    store = JournalStore(tmp_path)
    records = [*task_turn("t1", [task("call_1")], 10), *task_turn("t2", [task("call_1")], 20)]
    write(store, records, [("call_1", 20)])
    assert children_by_call(store) == {"call_1~2": "old.task1"}


def test_a_child_naming_an_id_of_ours_follows_that_call(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    records = [
        *task_turn("t1", [task("call_0001", "call_1")], 10),
        *task_turn("t2", [task("call_0002", "call_1")], 20),
    ]
    write(store, records, [("call_0002", 20), ("call_0001", 10)])
    assert children_by_call(store) == {"call_0001": "old.task2", "call_0002": "old.task1"}
