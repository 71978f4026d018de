"""A call the model writes as text is announced while its message streams and always ends on
the client's side: the first recognised call keeps the announced id (a second one is announced
at the end), a response cut by the output limit or one that makes API calls closes the
announcement `failed`, and nothing is announced when text calls are off. (The e2e side, frame
order and replay through the real process: tests/e2e/test_text_tool_calls.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from acp_server.agent import AgentEvent, ToolCallAnnounced, ToolCallDrafted, ToolCallProgress
from acp_server.session import records as rec
from tests.support.agent_harness import FakeModel, FakeTool, call, finish, running_agent, say, text

pytestmark = pytest.mark.anyio

READ = '{"name": "probe", "arguments": {"q": 1}}'


async def played(
    *responses: Any, text_calls: bool = True, ends: rec.Outcome | None = None
) -> tuple[list[AgentEvent], FakeTool]:
    model = FakeModel(*responses)
    if text_calls:
        model.text_tool_calls = True  # type: ignore[attr-defined]
    tool = FakeTool("probe")
    events: list[AgentEvent] = []
    async with running_agent(model, tools=[tool]) as handle:

        async def sink(event: AgentEvent) -> None:
            events.append(event)

        handle.agent.subscribe(sink)
        assert await handle.agent.followup(text("go")).wait() == (ends or rec.Completed())
    return events, tool


def pieces(message: str, size: int = 4) -> list[Any]:
    return [say(message[at : at + size]) for at in range(0, len(message), size)]


async def test_the_first_call_keeps_its_id_and_a_second_is_announced_at_the_end() -> None:
    second = '{"name": "probe", "arguments": {"q": 2}}'
    events, tool = await played([*pieces(f"{READ}\n{second}"), finish()])
    drafted = [e for e in events if isinstance(e, ToolCallDrafted)]
    assert drafted[0].first
    assert {e.call_id for e in drafted} == {drafted[0].call_id}  # only the first is drafted
    announced = [e for e in events if isinstance(e, ToolCallAnnounced)]
    assert [e.drafted for e in announced] == [True, False]
    assert announced[0].call_id == drafted[0].call_id != announced[1].call_id
    assert tool.runs == [{"q": 1}, {"q": 2}]


async def test_a_call_cut_by_the_output_limit_ends_failed_and_never_runs() -> None:
    events, tool = await played(
        [*pieces('```json\n{"name": "probe", "argum'), finish("max_tokens")], ends=rec.MaxTokens()
    )
    [announced] = [e for e in events if isinstance(e, ToolCallDrafted)]
    ends = [e for e in events if isinstance(e, ToolCallProgress)]
    assert [(e.call_id, e.status) for e in ends] == [(announced.call_id, "failed")]
    assert "ended before this call was complete" in (ends[0].output or "")
    assert tool.runs == []


async def test_a_response_that_makes_api_calls_closes_the_text_announcement() -> None:
    api = call("probe", q=9)
    events, tool = await played([*pieces(READ[:20]), api, finish("tool_calls")])
    [announced] = [e for e in events if isinstance(e, ToolCallDrafted)]
    closed = next(e for e in events if isinstance(e, ToolCallProgress))
    assert (closed.call_id, closed.status) == (announced.call_id, "failed")
    assert "not a tool call" in (closed.output or "")
    assert tool.runs == [{"q": 9}]  # the API call runs


async def test_a_call_announced_before_its_arguments_has_no_raw_input() -> None:
    """Updates with the arguments so far (always an object) come at most every 200 ms, so
    this fast stream shows only the announcement; tests/e2e/test_text_tool_calls.py streams
    slowly and checks that every `rawInput` is an object."""
    events, _ = await played([*pieces(READ, 1), finish()])
    drafted = [e for e in events if isinstance(e, ToolCallDrafted)]
    assert drafted[0].raw_input is None  # announced before the arguments began


async def test_nothing_is_announced_when_text_calls_are_off() -> None:
    events, tool = await played([*pieces(READ), finish()], text_calls=False)
    assert not [e for e in events if isinstance(e, ToolCallDrafted | ToolCallAnnounced)]
    assert tool.runs == []
