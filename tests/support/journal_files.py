"""Journals for the session tests: a header, prompts and complete turns, every record type and
outcome, a session written to a store, and raw bytes appended to a journal file."""

from __future__ import annotations

from pathlib import Path

from acp_server.session.journal import (
    JournalHeader,
    JournalStore,
)
from acp_server.session.records import (
    Aborted,
    AssistantMessage,
    Completed,
    DisposedOutcome,
    ErrorOutcome,
    ImagePart,
    InterruptedOutcome,
    MaxTokens,
    MaxTurnRequests,
    Outcome,
    Record,
    Refusal,
    ResourceLinkPart,
    ResourcePart,
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
REPO = Path(__file__).resolve().parents[2]
"""The repository root (a child process imports the package from there)."""


def header(
    session_id: str = "s1",
    *,
    additional_directories: list[str] | None = None,
    parent_session_id: str | None = None,
    parent_tool_call_id: str | None = None,
) -> JournalHeader:
    return JournalHeader(
        session_id=session_id,
        cwd="/work/project",
        created_at=AT,
        additional_directories=additional_directories or [],
        parent_session_id=parent_session_id,
        parent_tool_call_id=parent_tool_call_id,
    )


def prompt(text: str, turn_id: str = "t1", at: str = AT) -> UserMessage:
    return UserMessage(
        message_id=f"m-{turn_id}",
        content=[TextPart(text=text)],
        origin="prompt",
        turn_id=turn_id,
        at=at,
    )


def complete_turn(turn_id: str, text: str = "hi", at: str = AT) -> list[Record]:
    return [
        TurnStart(turn_id=turn_id, at=at),
        prompt(text, turn_id, at),
        StepStart(turn_id=turn_id, step=1, at=at),
        AssistantMessage(
            turn_id=turn_id, message_id=f"a-{turn_id}", parts=[TextPart(text="ok")], at=at
        ),
        StepEnd(turn_id=turn_id, step=1, finish="stop", at=at),
        TurnEndRecord(turn_id=turn_id, outcome=Completed(), at=at),
    ]


OTHER_OUTCOMES: list[Outcome] = [
    Aborted(),
    ErrorOutcome(message="boom", code="429"),
    DisposedOutcome(),
    MaxTokens(),
    MaxTurnRequests(),
    Refusal(),
    InterruptedOutcome(),
]

# Every record type, every content part and every outcome, in balanced turns.
EVERY_RECORD: list[Record] = [
    UserMessage(message_id="m0", content=[TextPart(text="fyi")], origin="context", at=AT),
    TurnStart(turn_id="t1", at=AT),
    UserMessage(
        message_id="m1",
        content=[
            TextPart(text="hello"),
            ImagePart(data="aGk=", mime_type="image/png", uri="file:///a.png"),
            ResourcePart(uri="file:///a.txt", text="contents", mime_type="text/plain"),
            ResourcePart(uri="file:///b.bin", blob="AAE="),
            ResourceLinkPart(uri="file:///c", name="c", title="C", size=3),
        ],
        origin="prompt",
        turn_id="t1",
        at=AT,
    ),
    UserMessage(
        message_id="m2", content=[TextPart(text="stop")], origin="steering", turn_id="t1", at=AT
    ),
    StepStart(turn_id="t1", step=1, at=AT),
    AssistantMessage(
        turn_id="t1",
        message_id="a1",
        parts=[ThoughtPart(text="hmm"), TextPart(text="reading\nnewlines stay escaped")],
        tool_calls=[
            ToolCallRecord(call_id="c1", name="read_file", arguments={"path": "a.txt"}),
            ToolCallRecord(call_id="c2", name="bash", arguments={"command": "ls", "n": [1, None]}),
            ToolCallRecord(call_id="c3", name="bash", arguments={}),
        ],
        at=AT,
    ),
    ToolResult(
        turn_id="t1",
        call_id="c1",
        status="completed",
        output="contents",
        title="Read a.txt",
        kind="read",
        at=AT,
    ),
    ToolResult(turn_id="t1", call_id="c2", status="failed", output="denied", at=AT),
    ToolResult(
        turn_id="t1", call_id="c3", status="failed", output="not run", synthetic="not_run", at=AT
    ),
    StepEnd(turn_id="t1", step=1, finish="tool_calls", at=AT),
    TurnEndRecord(turn_id="t1", outcome=Completed(), at=AT),
    *(
        record
        for index, outcome in enumerate(OTHER_OUTCOMES)
        for record in (
            TurnStart(turn_id=f"o{index}", at=AT),
            TurnEndRecord(turn_id=f"o{index}", outcome=outcome, at=AT),
        )
    ),
]


def write_session(store: JournalStore, records: list[Record], session_id: str = "s1") -> Path:
    with store.create(header(session_id)) as journal:
        for record in records:
            journal.append(record)
    return store.path_for(session_id)


def append_raw(path: Path, data: bytes) -> None:
    with open(path, "ab") as file:
        file.write(data)
