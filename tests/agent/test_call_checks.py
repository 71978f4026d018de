"""Bad model output is answered to the model, never a turn error: unusable arguments, unknown
tools and arguments that do not match the schema fail the call with a message and the turn
goes on; a repeated call with a repeated result is noted, and enough repeats end the turn with
a message. A context-exceeded answer ends the turn with the window and the request size, and
the context budget starts its estimates from the provider's reported usage."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from acp_server.agent.agent import AgentHandle, spawn_agent
from acp_server.agent.call_checks import call_problem, schema_problems
from acp_server.agent.events import AgentEvent, MessageChunk
from acp_server.agent.failures import MODEL_FAILED
from acp_server.agent.loop import AgentConfig
from acp_server.agent.seams import Deny, Seams
from acp_server.cancellation import TurnSignal
from acp_server.models.base import (
    ContextWindowExceeded,
    ModelRequest,
    ToolCallEvent,
    ToolCallRequest,
    ToolResultMessage,
    Usage,
)
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.tools.base import ToolOutput
from tests.support.agent_harness import (
    DEADLINE,
    FakeModel,
    FakeTool,
    call,
    finish,
    of_type,
    say,
    text,
)

pytestmark = pytest.mark.anyio

PATH_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
    "additionalProperties": False,
}


def schema_tool(name: str = "read") -> FakeTool:
    tool = FakeTool(name)
    tool.parameters = PATH_SCHEMA
    return tool


@asynccontextmanager
async def agent_with(
    model: FakeModel,
    tools: Sequence[FakeTool],
    *,
    max_repeats: int = 3,
    seams: Seams | None = None,
) -> AsyncIterator[tuple[AgentHandle, list[AgentEvent]]]:
    counter = itertools.count(1)
    events: list[AgentEvent] = []

    async def sink(event: AgentEvent) -> None:
        events.append(event)

    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = spawn_agent(
                SessionLog("s1"),
                AgentConfig(model=model, tools=list(tools), max_repeats=max_repeats),
                tg,
                seams=seams or Seams(),
                ids=lambda prefix: f"{prefix}_{next(counter)}",
            )
            handle.agent.subscribe(sink)
            try:
                yield handle, events
            finally:
                await handle.dispose()


def results(handle: AgentHandle) -> list[rec.ToolResult]:
    return of_type(handle.agent.session, rec.ToolResult)


def fed_back(request: ModelRequest) -> list[ToolResultMessage]:
    return [m for m in request.messages if isinstance(m, ToolResultMessage)]


def bad_json_call(name: str) -> ToolCallEvent:
    return ToolCallEvent(
        call=ToolCallRequest(
            call_id="call_bad",
            name=name,
            arguments={},
            arguments_error="the arguments are not valid JSON (truncated): '{\"pa'",
        )
    )


# --- the checks themselves ------------------------------------------------------------------


def test_schema_problems_at_the_top_level() -> None:
    assert schema_problems({"path": "a"}, PATH_SCHEMA) == []
    assert schema_problems({"path": "a", "limit": 3}, PATH_SCHEMA) == []
    assert schema_problems({}, PATH_SCHEMA) == ["missing required property 'path'"]
    assert schema_problems({"path": 1, "limit": True, "x": 0}, PATH_SCHEMA) == [
        "'path' must be string, not integer",
        "'limit' must be integer, not boolean",
        "unknown property 'x'",
    ]
    assert schema_problems({"n": 1.5}, {"properties": {"n": {"type": ["number", "null"]}}}) == []
    assert schema_problems({"anything": 1}, {"type": "object"}) == []


def test_call_problem_says_what_the_tool_takes() -> None:
    tools = {"read": schema_tool()}
    missing = ToolCallRequest(call_id="c", name="read", arguments={})
    assert call_problem(missing, tools) == (
        "invalid arguments for read: missing required property 'path'. "
        "It takes read(path: string, required; limit: integer)."
    )
    assert (
        call_problem(ToolCallRequest(call_id="c", name="read", arguments={"path": "a"}), tools)
        is None
    )
    unknown = call_problem(ToolCallRequest(call_id="c", name="write", arguments={}), tools)
    assert unknown == "unknown tool 'write'; available tools: read. Call one of these."


# --- through the loop -----------------------------------------------------------------------


async def test_an_unknown_tool_fails_the_call_and_the_model_goes_on() -> None:
    model = FakeModel([call("nope"), finish("tool_calls")], [say("sorry"), finish()])
    tool = FakeTool("probe")
    async with agent_with(model, [tool]) as (handle, _):
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    (result,) = results(handle)
    assert result.status == "failed"
    assert "unknown tool 'nope'; available tools: probe" in result.output
    (fed,) = fed_back(model.requests[1])
    assert fed.is_error and "unknown tool 'nope'" in fed.output


async def test_invalid_json_arguments_fail_the_call_without_running_or_asking() -> None:
    asked: list[str] = []

    async def approve(call: ToolCallRequest, signal: TurnSignal) -> Deny | None:
        asked.append(call.name)
        return None

    tool = schema_tool()
    model = FakeModel([bad_json_call("read"), finish("tool_calls")], [say("retrying"), finish()])
    async with agent_with(model, [tool], seams=Seams(approval=[approve])) as (handle, _):
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert tool.runs == [] and asked == []
    (result,) = results(handle)
    assert result.status == "failed"
    assert result.output.startswith("invalid arguments for read: the arguments are not valid JSON")
    assert "Send the arguments as one JSON object: read(path: string, required" in result.output
    assert fed_back(model.requests[1])[0].output == result.output


async def test_arguments_against_the_schema_fail_and_a_retry_succeeds() -> None:
    tool = schema_tool()
    model = FakeModel(
        [call("read", path=7), finish("tool_calls")],
        [call("read", path="a.py"), finish("tool_calls")],
        [say("done"), finish()],
    )
    async with agent_with(model, [tool]) as (handle, _):
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    first, second = results(handle)
    assert first.status == "failed" and "'path' must be string, not integer" in first.output
    assert second.status == "completed"
    assert tool.runs == [{"path": "a.py"}]


async def test_a_repeated_call_is_noted_and_enough_repeats_end_the_turn() -> None:
    tool = FakeTool("probe")
    model = FakeModel(default=[call("probe", x=1), finish("tool_calls")])
    async with agent_with(model, [tool], max_repeats=2) as (handle, events):
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert len(tool.runs) == 3  # the call, then two repeats
    outputs = [r.output for r in results(handle)]
    assert outputs[0] == "ok"
    assert "already returned this exact result 1 time in this turn" in outputs[1]
    assert "already returned this result 2 times in this turn; the turn was stopped" in outputs[2]
    stop = 'Stopped: the same call probe({"x":1}) was made 3 times in this turn'
    assert any(
        isinstance(e, MessageChunk) and e.text.startswith(stop) and e.from_agent for e in events
    )
    last = of_type(handle.agent.session, rec.AssistantMessage)[-1]
    assert last.parts[0].text.startswith(stop)  # recorded for replay, as the agent's own
    assert last.origin == "agent"
    assert len(model.requests) == 3


async def test_a_repeated_call_with_a_new_result_is_not_a_repeat() -> None:
    counter = itertools.count()

    async def changing(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        return ToolOutput(f"result {next(counter)}")

    tool = FakeTool("probe", changing)
    steps = [[call("probe"), finish("tool_calls")] for _ in range(4)]
    model = FakeModel(*steps, [say("done"), finish()])
    async with agent_with(model, [tool], max_repeats=1) as (handle, _):
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
    assert [r.output for r in results(handle)] == [f"result {i}" for i in range(4)]


async def test_repeats_are_counted_per_turn() -> None:
    tool = FakeTool("probe")
    model = FakeModel(
        [call("probe"), finish("tool_calls")],
        [say("one"), finish()],
        [call("probe"), finish("tool_calls")],
        [say("two"), finish()],
    )
    async with agent_with(model, [tool], max_repeats=1) as (handle, _):
        await handle.agent.followup(text("a")).wait()
        await handle.agent.followup(text("b")).wait()
    assert [r.output for r in results(handle)] == ["ok", "ok"]


async def test_context_exceeded_ends_the_turn_naming_window_and_request_size() -> None:
    async def overflow(request: ModelRequest, signal: TurnSignal) -> object:
        raise ContextWindowExceeded(
            "openai:qwen", request_tokens=None, window=None, server_said="too long"
        )

    model = FakeModel([overflow])
    async with agent_with(model, []) as (handle, _):
        ticket = handle.agent.followup(text("x" * 3000))
        outcome = await ticket.wait()
        budget = handle.agent.context_budget
        estimate = budget.estimate(model.requests[0])
    # The journal keeps the coarse outcome; the client's error gets the whole text.
    assert outcome == rec.ErrorOutcome(message=MODEL_FAILED, code="context_window_exceeded")
    assert (
        f"a request of about {estimate} tokens does not fit in the {budget.window}-token "
        "context window" in (ticket.error_detail or "")
    )


async def test_reported_usage_is_where_the_next_estimate_starts() -> None:
    model = FakeModel(
        [say("hi"), Usage(input_tokens=4321, output_tokens=2), finish()],
    )
    async with agent_with(model, []) as (handle, _):
        await handle.agent.followup(text("hello")).wait()
        budget = handle.agent.context_budget
        assert budget.estimate(model.requests[0]) == 4321
