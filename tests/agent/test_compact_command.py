"""`Agent.compact()`: a compaction as a turn of its own, queued like a follow-up and cancelled
like one; the next request starts from the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.agent.agent import spawn_agent
from acp_server.agent.compaction import SUMMARIZER_SYSTEM
from acp_server.agent.conversation import SUMMARY_PREFIX
from acp_server.agent.events import AgentEvent, CompactionEnded, MessageChunk
from acp_server.agent.loop import AgentConfig
from acp_server.models.base import ModelRequest, TextPart, UserMessage
from acp_server.models.spec import load_model
from acp_server.session import records as rec
from acp_server.session.log import SessionLog

pytestmark = pytest.mark.anyio


class Recorder:
    def __init__(self, tmp_path: Path, responses: list[list[dict[str, Any]]]) -> None:
        script = tmp_path / "s.json"
        script.write_text(json.dumps({"responses": responses}))
        self.model = load_model(f"script:{script}")
        self.name = "recorder"
        self.requests: list[ModelRequest] = []
        self.asked = anyio.Event()

    def stream(self, request: ModelRequest, signal: Any) -> Any:
        self.requests.append(request)
        if request.system_prompt == SUMMARIZER_SYSTEM:  # a compaction's summary request
            self.asked.set()
        return self.model.stream(request, signal)


def first_text(request: ModelRequest) -> str:
    item = request.messages[0]
    assert isinstance(item, UserMessage) and isinstance(item.parts[0], TextPart)
    return item.parts[0].text


async def test_compact_summarizes_with_the_instructions_and_the_next_prompt_starts_from_it(
    tmp_path: Path,
) -> None:
    model = Recorder(
        tmp_path,
        [[{"text": "one"}], [{"text": "two"}], [{"text": "NOTES"}], [{"text": "three"}]],
    )
    log = SessionLog("sess_cc")
    events: list[AgentEvent] = []

    async def sink(event: AgentEvent) -> None:
        events.append(event)

    async with anyio.create_task_group() as tg:
        handle = spawn_agent(log, AgentConfig(model=model, tools=[]), tg)  # type: ignore[arg-type]
        agent = handle.agent
        agent.subscribe(sink)
        await agent.followup([rec.TextPart(text="first")]).wait()
        await agent.followup([rec.TextPart(text="second")]).wait()
        assert await agent.compact("keep the word banana").wait() == rec.Completed()
        await agent.followup([rec.TextPart(text="third")]).wait()
        await handle.dispose()
    summary_request = model.requests[2]
    assert summary_request.tools == [] and "keep the word banana" in first_text(summary_request)
    compaction = next(r for r in log.records if isinstance(r, rec.Compaction))
    assert compaction.summary == "NOTES"
    # It opens no turn: the compaction record alone, between the turns around it.
    index = log.records.index(compaction)
    assert isinstance(log.records[index - 1], rec.TurnEndRecord)
    assert isinstance(log.records[index + 1], rec.TurnStart)
    assert compaction.turn_id is None
    last = model.requests[3]
    assert first_text(last) == SUMMARY_PREFIX + "NOTES"
    assert [type(e) for e in events if isinstance(e, (CompactionEnded, MessageChunk))][-3:] == [
        CompactionEnded,
        MessageChunk,
        MessageChunk,
    ]


async def test_cancelling_a_compact_turn_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    model = Recorder(
        tmp_path, [[{"text": "one"}], [{"text": "two"}], [{"delay_ms": 60_000}], [{"text": "x"}]]
    )
    log = SessionLog("sess_cc2")
    async with anyio.create_task_group() as tg:
        handle = spawn_agent(log, AgentConfig(model=model, tools=[]), tg)  # type: ignore[arg-type]
        agent = handle.agent
        await agent.followup([rec.TextPart(text="first")]).wait()
        await agent.followup([rec.TextPart(text="second")]).wait()
        before = len(log.records)
        ticket = agent.compact()
        with anyio.fail_after(10):
            await model.asked.wait()
            agent.cancel()
            assert await ticket.wait() == rec.Aborted()
        await handle.dispose()
    assert len(log.records) == before  # nothing at all was written


async def test_compact_with_nothing_before_the_last_turns_says_so(tmp_path: Path) -> None:
    model = Recorder(tmp_path, [[{"text": "one"}]])
    log = SessionLog("sess_cc3")
    events: list[AgentEvent] = []

    async def sink(event: AgentEvent) -> None:
        events.append(event)

    async with anyio.create_task_group() as tg:
        handle = spawn_agent(log, AgentConfig(model=model, tools=[]), tg)  # type: ignore[arg-type]
        handle.agent.subscribe(sink)
        assert await handle.agent.compact().wait() == rec.Completed()
        await handle.dispose()
    said = [e.text for e in events if isinstance(e, MessageChunk)]
    assert said == ["The conversation was not compacted: nothing older than this turn to compact."]
