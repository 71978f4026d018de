"""The ids of a step's tool calls are the agent's own (acp_server/agent/model_step.py): a model
that reuses an id, in a later step or for a second call of one response, gets a fresh id for
each call, its drafts shown under the id the call runs with; the model's id is journaled
beside ours and sent back to it. A call written as text has our id only, and a subagent's calls
get ids of their own too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_server.agent import AgentEvent, ToolCallAnnounced, ToolCallDrafted, ToolCallProgress
from acp_server.agent.subagents import journal_children
from acp_server.models.base import ToolCallDraft, ToolCallEvent, ToolCallRequest
from acp_server.session import records as rec
from acp_server.session.journal import JournalStore
from tests.support.agent_harness import FakeModel, FakeTool, finish, running_agent, say, text
from tests.support.parent_agent import ParentModel, parent_agent

pytestmark = pytest.mark.anyio


def reused(name: str = "probe", **arguments: Any) -> ToolCallEvent:
    """A call under the one id this model gives every call."""
    return ToolCallEvent(call=ToolCallRequest(call_id="call_1", name=name, arguments=arguments))


def calls_in(records: Any) -> list[rec.ToolCallRecord]:
    return [c for r in records if isinstance(r, rec.AssistantMessage) for c in r.tool_calls]


async def test_a_reused_model_id_gives_each_call_an_id_of_its_own() -> None:
    model = FakeModel(
        [reused(q=1), finish("tool_calls")],
        # A second call of one response drafted under the id of the first, once that one is
        # complete (a server sending its calls one after the other).
        [
            ToolCallDraft(call_id="call_1", name="probe"),
            ToolCallDraft(call_id="call_1", name="probe", arguments='{"q": 2}'),
            reused(q=2),
            ToolCallDraft(call_id="call_1", name="probe"),
            reused(q=3),
            finish("tool_calls"),
        ],
        [say("done")],
    )
    tool = FakeTool("probe")
    events: list[AgentEvent] = []
    async with running_agent(model, tools=[tool]) as handle:

        async def sink(event: AgentEvent) -> None:
            events.append(event)

        handle.agent.subscribe(sink)
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    announced = [e.call_id for e in events if isinstance(e, ToolCallAnnounced)]
    assert len(set(announced)) == 3 and "call_1" not in announced
    drafted = [e.call_id for e in events if isinstance(e, ToolCallDrafted) and e.first]
    assert drafted == announced[1:]  # each draft shown under the id its call runs with
    ended = [e.call_id for e in events if isinstance(e, ToolCallProgress) and e.output]
    assert ended == announced
    assert tool.runs == [{"q": 1}, {"q": 2}, {"q": 3}]
    journaled = calls_in(handle.agent.session.records)
    assert [(c.call_id, c.model_call_id) for c in journaled] == [
        (call_id, "call_1") for call_id in announced
    ]
    # The model reads its own ids back, each result after its call.
    last = model.requests[-1].messages
    assert [c.call_id for m in last if hasattr(m, "tool_calls") for c in m.tool_calls] == [
        "call_1"
    ] * 3
    assert [m.call_id for m in last if hasattr(m, "output")] == ["call_1"] * 3


async def test_a_call_written_as_text_has_our_id_only() -> None:
    model = FakeModel([say('{"name": "probe", "arguments": {"q": 1}}'), finish()], [say("ok")])
    model.text_tool_calls = True  # type: ignore[attr-defined]
    async with running_agent(model, tools=[FakeTool("probe")]) as handle:
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    [written] = calls_in(handle.agent.session.records)
    assert written.from_text and written.model_call_id is None
    [result] = [r for r in handle.agent.session.records if isinstance(r, rec.ToolResult)]
    assert result.call_id == written.call_id
    assert [m.call_id for m in model.requests[-1].messages if hasattr(m, "output")] == [
        written.call_id
    ]


async def test_a_subagent_and_its_parent_reusing_one_model_id_keep_their_calls_apart(
    tmp_path: Path,
) -> None:
    child = FakeModel([reused(), finish("tool_calls")], [say("child answer")])
    model = ParentModel(
        [reused("task", prompt="look"), finish("tool_calls")],
        [reused(), finish("tool_calls")],
        [say("parent done")],
        child=child,
    )
    store = JournalStore(tmp_path)
    journals = journal_children(store, str(tmp_path), [])
    async with parent_agent(model, journals, tools=[FakeTool("probe")]) as (handle, _):
        assert await handle.agent.followup(text("hi")).wait() == rec.Completed()
    task_call, probe_call = calls_in(handle.agent.session.records)
    assert task_call.call_id != probe_call.call_id
    assert "call_1" not in (task_call.call_id, probe_call.call_id)
    loaded = store.open("s1.task1")
    loaded.journal.close()
    assert loaded.header.parent_tool_call_id == task_call.call_id
    [child_call] = calls_in(loaded.records)
    assert child_call.model_call_id == "call_1"
    assert child_call.call_id not in ("call_1", task_call.call_id, probe_call.call_id)
