"""Compaction as a step of the turn (issue 13, items 3 and 4), in process: the trim stage,
the summary stage with the same model and no tools, durability through the log, and a cancel
or a failure during the summary request leaving the log as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.agent.compaction import Compactor, transcript
from acp_server.agent.conversation import SUMMARY_PREFIX, Conversation, tool_result_stub
from acp_server.agent.events import AgentEvent, CompactionEnded, CompactionStarted
from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.models.base import (
    ModelProvider,
    ModelRequest,
    TextPart,
    ToolResultMessage,
    UserMessage,
)
from acp_server.models.spec import load_model
from acp_server.session import records as rec
from acp_server.session.log import SessionLog

pytestmark = pytest.mark.anyio
AT = "2026-12-01T00:00:00.000Z"


class Budget:
    """A window of `window` tokens at 1 character a token."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.limit = window * 8 // 10
        self.forgotten = 0

    def estimate(self, request: ModelRequest) -> int:
        return len(json.dumps(msgspec_to_builtins(request)))

    def forget_usage(self) -> None:
        self.forgotten += 1


def msgspec_to_builtins(value: object) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


def turn(n: int, body: str, pad: int = 0) -> list[rec.Record]:
    t = f"t{n}"
    return [
        rec.TurnStart(turn_id=t, at=AT),
        rec.UserMessage(
            message_id=f"u{n}",
            content=[rec.TextPart(text=f"read file {n}" + " please" * pad)],
            origin="prompt",
            turn_id=t,
            at=AT,
        ),
        rec.AssistantMessage(
            turn_id=t,
            message_id=f"a{n}",
            parts=[],
            tool_calls=[rec.ToolCallRecord(call_id=f"c{n}", name="read_file", arguments={})],
            at=AT,
        ),
        rec.ToolResult(turn_id=t, call_id=f"c{n}", status="completed", output=body, at=AT),
        rec.AssistantMessage(
            turn_id=t, message_id=f"b{n}", parts=[rec.TextPart(text=f"done {n}")], at=AT
        ),
        rec.TurnEndRecord(turn_id=t, outcome=rec.Completed(), at=AT),
    ]


def open_turn(n: int) -> list[rec.Record]:
    return turn(n, "")[:2]


class Recorder:
    def __init__(self, model: ModelProvider) -> None:
        self.model = model
        self.name = "recorder"
        self.requests: list[ModelRequest] = []
        self.asked = anyio.Event()

    def stream(self, request: ModelRequest, signal: Any) -> Any:
        self.requests.append(request)
        self.asked.set()
        return self.model.stream(request, signal)


def setup(
    tmp_path: Path,
    turns: int,
    body: str,
    window: int,
    responses: list[list[dict[str, Any]]],
    pad: int = 0,
) -> tuple[SessionLog, Conversation, Budget, Compactor, Recorder, list[AgentEvent]]:
    """`turns` finished turns whose tool result is `body` and whose prompt is padded by `pad`
    words (prompts cannot be trimmed), then an open turn."""
    records: list[rec.Record] = []
    for n in range(1, turns + 1):
        records += turn(n, body, pad)
    records += open_turn(turns + 1)
    log = SessionLog("sess_c", records)
    conversation = Conversation(log.records)
    log.on_append(conversation.add)
    budget = Budget(window)
    events: list[AgentEvent] = []

    async def emit(event: AgentEvent) -> None:
        events.append(event)

    counter = iter(range(1, 100))
    compactor = Compactor(
        log, conversation, budget, lambda p: f"{p}_{next(counter)}", emit, budget.estimate
    )
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"responses": responses}))
    return log, conversation, budget, compactor, Recorder(load_model(f"script:{script}")), events


def request_for(conversation: Conversation) -> ModelRequest:
    return ModelRequest(
        session_id="sess_c", system_prompt="sys", messages=list(conversation.items), tools=[]
    )


async def test_a_request_under_the_limit_is_left_alone(tmp_path: Path) -> None:
    _, conversation, _, compactor, model, events = setup(tmp_path, 2, "x" * 10, 10_000, [[]])
    request = request_for(conversation)
    result = await compactor.fit(request, model, "t3", TurnCancellation().signal)
    assert result.status == "not_needed" and result.request is request
    assert model.requests == [] and events == []


async def test_old_tool_results_are_cut_to_stubs_first(tmp_path: Path) -> None:
    body = "line\n" * 400  # 2,000 characters per result
    log, conversation, budget, compactor, model, events = setup(tmp_path, 5, body, 9_000, [[]])
    before = len(log.records)
    request = request_for(conversation)
    assert budget.estimate(request) > budget.limit
    result = await compactor.fit(request, model, "t6", TurnCancellation().signal)
    assert result.status == "completed"
    assert budget.estimate(result.request) <= budget.limit
    assert model.requests == []  # no summary was needed
    [record] = log.records[before:]
    assert isinstance(record, rec.Compaction) and record.summary is None
    assert record.kept_from == "u4"  # the last two finished turns and the current one stay
    outputs = [i.output for i in result.request.messages if isinstance(i, ToolResultMessage)]
    assert outputs == [tool_result_stub(body)] * 3 + [body] * 2
    assert record.tokens_before > record.tokens_after
    assert [type(e) for e in events] == [CompactionStarted, CompactionEnded]
    assert budget.forgotten == 1
    # The log alone gives the same compacted conversation (as after session/load).
    assert list(Conversation(log.records).items) == list(conversation.items)


async def test_when_stubs_are_not_enough_the_older_turns_are_summarized_without_tools(
    tmp_path: Path,
) -> None:
    body = "y" * 3_000
    log, conversation, budget, compactor, model, events = setup(
        tmp_path,
        6,
        body,
        9_000,
        [[{"text": "Goal: read the files. "}, {"text": "Open: none."}]],
        pad=250,
    )
    request = request_for(conversation)
    result = await compactor.fit(request, model, "t7", TurnCancellation().signal)
    assert result.status == "completed"
    [summary_request] = model.requests
    assert summary_request.tools == []
    [message] = summary_request.messages
    assert isinstance(message, UserMessage) and isinstance(message.parts[0], TextPart)
    asked = message.parts[0].text
    assert "read file" in asked and "files read, created or changed" in asked.lower()
    record = log.records[-1]
    assert isinstance(record, rec.Compaction)
    assert record.summary == "Goal: read the files. Open: none."
    first = result.request.messages[0]
    assert isinstance(first, UserMessage) and isinstance(first.parts[0], TextPart)
    assert first.parts[0].text == SUMMARY_PREFIX + record.summary
    assert budget.estimate(result.request) <= budget.limit
    ended = events[-1]
    assert isinstance(ended, CompactionEnded) and ended.status == "completed"
    assert ended.summary == record.summary and ended.window == 9_000
    assert list(Conversation(log.records).items) == list(conversation.items)


async def test_a_cancel_during_the_summary_request_writes_nothing(tmp_path: Path) -> None:
    log, conversation, _, compactor, model, events = setup(
        tmp_path, 6, "z" * 3_000, 9_000, [[{"delay_ms": 60_000}, {"text": "never"}]], pad=250
    )
    before = list(log.records)
    items = list(conversation.items)
    holder = TurnCancellation()

    async def cancel_when_asked() -> None:
        await model.asked.wait()
        holder.abort(UserCancel())

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_asked)
            with pytest.raises(TurnAborted):
                await compactor.fit(request_for(conversation), model, "t7", holder.signal)
    assert list(log.records) == before
    assert list(conversation.items) == items
    ended = events[-1]
    assert isinstance(ended, CompactionEnded) and ended.status == "cancelled"


async def test_a_failed_summary_request_writes_nothing_and_says_why(tmp_path: Path) -> None:
    log, conversation, _, compactor, model, events = setup(
        tmp_path, 6, "w" * 3_000, 9_000, [[{"error": "overloaded"}]], pad=250
    )
    before = list(log.records)
    result = await compactor.fit(request_for(conversation), model, "t7", TurnCancellation().signal)
    assert result.status == "failed" and result.error == "overloaded"
    assert list(log.records) == before
    ended = events[-1]
    assert isinstance(ended, CompactionEnded) and ended.status == "failed"
    assert ended.error == "overloaded"


def test_the_summarizer_transcript_keeps_the_newest_entries_and_says_what_was_cut() -> None:
    items = [UserMessage(parts=[TextPart(text=SUMMARY_PREFIX + "old notes")])]
    items += [UserMessage(parts=[TextPart(text=f"message {n} " + "p" * 500)]) for n in range(20)]
    text = transcript(items, 2_000)
    assert "old notes" in text and "message 19" in text and "message 0 " not in text
    assert "earlier entries left out to fit" in text
