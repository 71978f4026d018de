"""The in-memory session log: appends, listeners, and the queries the runtime relies on."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from acp_server.session.log import SessionLog
from acp_server.session.records import (
    Aborted,
    AssistantMessage,
    Completed,
    Record,
    StepEnd,
    StepStart,
    TextPart,
    ThoughtPart,
    ToolCallRecord,
    ToolResult,
    TurnEndRecord,
    TurnStart,
    UserMessage,
)

AT = "2026-11-30T04:05:06.123Z"


def user(text: str, turn_id: str | None, message_id: str = "m") -> UserMessage:
    return UserMessage(
        message_id=message_id,
        content=[TextPart(text=text)],
        origin="prompt" if turn_id is not None else "context",
        turn_id=turn_id,
        at=AT,
    )


def call(call_id: str, name: str = "bash") -> ToolCallRecord:
    return ToolCallRecord(call_id=call_id, name=name, arguments={"command": call_id})


def answer(turn_id: str, *parts: TextPart | ThoughtPart, calls: Sequence[str] = ()) -> Record:
    return AssistantMessage(
        turn_id=turn_id,
        message_id=f"a-{turn_id}",
        parts=list(parts),
        tool_calls=[call(c) for c in calls],
        at=AT,
    )


def result(turn_id: str, call_id: str) -> ToolResult:
    return ToolResult(turn_id=turn_id, call_id=call_id, status="completed", output="ok", at=AT)


def finished_turn(turn_id: str, text: str) -> list[Record]:
    return [
        TurnStart(turn_id=turn_id, at=AT),
        user(f"prompt {turn_id}", turn_id),
        StepStart(turn_id=turn_id, step=1, at=AT),
        answer(turn_id, TextPart(text=text)),
        StepEnd(turn_id=turn_id, step=1, finish="stop", at=AT),
        TurnEndRecord(turn_id=turn_id, outcome=Completed(), at=AT),
    ]


def test_new_log_is_empty_and_keeps_its_id() -> None:
    log = SessionLog("s1")
    assert log.session_id == "s1"
    assert len(log.records) == 0
    assert list(log.records) == []
    assert log.last_turn_end() is None
    assert log.last_assistant_text() == ""
    assert log.completed_turns() == []


def test_initial_records_are_copied() -> None:
    initial = finished_turn("t1", "hi")
    log = SessionLog("s1", initial)
    initial.clear()
    assert len(log.records) == 6


def test_append_extends_the_live_read_only_view() -> None:
    log = SessionLog("s1")
    view = log.records
    first = TurnStart(turn_id="t1", at=AT)
    log.append(first)
    assert len(view) == 1
    assert view[0] is first
    assert view[-1] is first
    assert list(view[0:1]) == [first]
    assert first in view
    assert not hasattr(view, "append")
    with pytest.raises(TypeError):
        view[0] = first  # type: ignore[index]


def test_listeners_see_each_append_in_order_until_unsubscribed() -> None:
    log = SessionLog("s1")
    seen: list[tuple[str, Record]] = []
    stop_a = log.on_append(lambda r: seen.append(("a", r)))
    log.on_append(lambda r: seen.append(("b", r)))
    first = TurnStart(turn_id="t1", at=AT)
    log.append(first)
    assert seen == [("a", first), ("b", first)]
    stop_a()
    stop_a()  # idempotent
    second = user("hi", "t1")
    log.append(second)
    assert seen == [("a", first), ("b", first), ("b", second)]


def test_same_callback_registered_twice_is_two_registrations() -> None:
    log = SessionLog("s1")
    seen: list[Record] = []
    stop_one = log.on_append(seen.append)
    log.on_append(seen.append)
    log.append(TurnStart(turn_id="t1", at=AT))
    assert len(seen) == 2
    stop_one()
    log.append(TurnStart(turn_id="t2", at=AT))
    assert len(seen) == 3


def test_listener_sees_the_record_already_in_the_log() -> None:
    log = SessionLog("s1")
    lengths: list[int] = []
    log.on_append(lambda _r: lengths.append(len(log.records)))
    log.append(TurnStart(turn_id="t1", at=AT))
    assert lengths == [1]


def test_failing_listener_does_not_break_append(caplog: pytest.LogCaptureFixture) -> None:
    log = SessionLog("s1")
    seen: list[Record] = []

    def broken(_record: Record) -> None:
        raise RuntimeError("listener bug")

    log.on_append(broken)
    log.on_append(seen.append)
    record = TurnStart(turn_id="t1", at=AT)
    with caplog.at_level(logging.ERROR, logger="acp_server.session.log"):
        log.append(record)
    assert list(log.records) == [record]
    assert seen == [record]
    assert "listener bug" in caplog.text
    assert "s1" in caplog.text


def test_listener_may_unsubscribe_during_append() -> None:
    log = SessionLog("s1")
    seen: list[str] = []

    def once(_record: Record) -> None:
        seen.append("once")
        stop()

    stop = log.on_append(once)
    log.on_append(lambda _r: seen.append("other"))
    log.append(TurnStart(turn_id="t1", at=AT))
    log.append(TurnStart(turn_id="t2", at=AT))
    assert seen == ["once", "other", "other"]


def test_completed_turns_excludes_the_open_last_turn() -> None:
    idle_before = user("context before", None, "i1")
    idle_between = user("context between", None, "i2")
    t1 = finished_turn("t1", "one")
    t2 = finished_turn("t2", "two")
    t3_open: list[Record] = [
        TurnStart(turn_id="t3", at=AT),
        user("prompt t3", "t3"),
        StepStart(turn_id="t3", step=1, at=AT),
        answer("t3", TextPart(text="working"), calls=["c1"]),
    ]
    log = SessionLog("s1", [idle_before, *t1, idle_between, *t2, *t3_open])
    assert log.completed_turns() == [idle_before, *t1, idle_between, *t2]


def test_completed_turns_keeps_aborted_turns_and_order() -> None:
    aborted: list[Record] = [
        TurnStart(turn_id="t1", at=AT),
        user("prompt", "t1"),
        TurnEndRecord(turn_id="t1", outcome=Aborted(), at=AT),
    ]
    t2 = finished_turn("t2", "two")
    log = SessionLog("s1", [*aborted, *t2])
    assert log.completed_turns() == [*aborted, *t2]
    assert log.completed_turns() is not log.completed_turns()


def test_open_tool_calls_lists_unanswered_calls_of_that_turn_in_order() -> None:
    log = SessionLog("s1", finished_turn("t1", "one"))
    log.append(TurnStart(turn_id="t2", at=AT))
    log.append(answer("t2", TextPart(text="step 1"), calls=["c1", "c2", "c3"]))
    assert [c.call_id for c in log.open_tool_calls("t2")] == ["c1", "c2", "c3"]
    log.append(result("t2", "c2"))
    assert [c.call_id for c in log.open_tool_calls("t2")] == ["c1", "c3"]
    assert log.open_tool_calls("t2")[0] == call("c1")
    # A result with the same call id in another turn does not balance this turn.
    log.append(result("t1", "c1"))
    assert [c.call_id for c in log.open_tool_calls("t2")] == ["c1", "c3"]
    log.append(result("t2", "c1"))
    log.append(
        ToolResult(
            turn_id="t2",
            call_id="c3",
            status="failed",
            output="not run",
            synthetic="not_run",
            at=AT,
        )
    )
    assert log.open_tool_calls("t2") == []
    assert log.open_tool_calls("t1") == []
    assert log.open_tool_calls("unknown") == []


def test_open_tool_calls_handles_call_ids_reused_across_steps() -> None:
    log = SessionLog("s1", [TurnStart(turn_id="t1", at=AT)])
    log.append(answer("t1", calls=["call_0"]))
    log.append(result("t1", "call_0"))
    log.append(answer("t1", calls=["call_0", "call_1"]))
    assert [c.call_id for c in log.open_tool_calls("t1")] == ["call_0", "call_1"]
    log.append(result("t1", "call_0"))
    assert [c.call_id for c in log.open_tool_calls("t1")] == ["call_1"]


def test_last_turn_end_is_the_most_recent() -> None:
    log = SessionLog("s1", finished_turn("t1", "one"))
    end = log.last_turn_end()
    assert end is not None
    assert end.turn_id == "t1"
    assert end.outcome == Completed()
    log.append(TurnStart(turn_id="t2", at=AT))
    assert log.last_turn_end() is end
    log.append(TurnEndRecord(turn_id="t2", outcome=Aborted(), at=AT))
    latest = log.last_turn_end()
    assert latest is not None
    assert latest.turn_id == "t2"
    assert latest.outcome == Aborted()


def test_last_assistant_text_joins_text_parts_of_the_last_message() -> None:
    log = SessionLog("s1", finished_turn("t1", "old answer"))
    assert log.last_assistant_text() == "old answer"
    log.append(TurnStart(turn_id="t2", at=AT))
    log.append(
        answer(
            "t2",
            ThoughtPart(text="thinking..."),
            TextPart(text="Hello, "),
            ThoughtPart(text="more"),
            TextPart(text="world"),
        )
    )
    log.append(user("later context", "t2"))
    assert log.last_assistant_text() == "Hello, world"
    log.append(answer("t2", ThoughtPart(text="only thought")))
    assert log.last_assistant_text() == ""
