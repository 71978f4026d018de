"""A journal written before the agent made its own tool-call ids (a model's ids, one reused), and
the records it is made of: for the call-id and replay tests."""

from __future__ import annotations

from acp_server.session import records as rec

AT = "2026-12-01T00:00:00.000Z"


def call(call_id: str, name: str, **arguments: object) -> rec.ToolCallRecord:
    return rec.ToolCallRecord(call_id=call_id, name=name, arguments=dict(arguments))


def asked(turn: str, *calls: rec.ToolCallRecord) -> rec.AssistantMessage:
    return rec.AssistantMessage(
        turn_id=turn,
        message_id=f"m_{turn}_{calls[0].name}",
        parts=[],
        tool_calls=list(calls),
        at=AT,
    )


def result(turn: str, call_id: str, title: str, kind: str, output: str) -> rec.ToolResult:
    return rec.ToolResult(
        turn_id=turn,
        call_id=call_id,
        status="completed",
        output=output,
        title=title,
        kind=kind,
        at=AT,
    )


def turn(turn_id: str, *records: rec.Record) -> list[rec.Record]:
    return [
        rec.TurnStart(turn_id=turn_id, at=AT),
        *records,
        rec.TurnEndRecord(turn_id=turn_id, outcome=rec.Completed(), at=AT),
    ]


LEGACY: list[rec.Record] = [
    *turn(
        "t1",
        asked("t1", call("call_1", "read_file", path="a.txt")),
        result("t1", "call_1", "Read a.txt", "read", "alpha"),
    ),
    *turn(
        "t2",
        asked("t2", call("call_1", "list_dir", path=".")),
        result("t2", "call_1", "List .", "search", "a.txt"),
    ),
    *turn(
        "t3",
        asked(
            "t3", call("call_1", "read_file", path="b.txt"), call("call_1", "bash", command="ls")
        ),
        result("t3", "call_1", "Read b.txt", "read", "beta"),
        result("t3", "call_1", "ls", "execute", "a.txt b.txt"),
    ),
]
