"""Every seam of a turn receives the turn's one signal and can be released by `cancel()`.

For each seam a cooperative listener waits on `signal.wait()` while the test cancels; the turn
then ends aborted and nothing after that seam runs. Within a turn every seam sees the same
signal object; the next turn gets a fresh one. Prompt submission may also rewrite the prompt,
add context or block the turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import anyio
import pytest

from acp_server.agent.inbox import Blocked
from acp_server.agent.seams import (
    PromptSubmission,
    Seams,
    StepInfo,
    StepResult,
    TurnProgress,
)
from acp_server.cancellation import TurnSignal, UserCancel
from acp_server.models.base import ConversationItem, ModelRequest, ToolCallRequest
from acp_server.session import records as rec
from acp_server.tools.base import ToolOutput
from acp_server.verdicts import Block, Deny
from tests.support.agent_harness import (
    END_STREAM,
    FakeModel,
    FakeTool,
    Response,
    Trace,
    call,
    finish,
    kinds,
    request_user_texts,
    running_agent,
    say,
    text,
    turn_ends,
    user_texts,
)

pytestmark = pytest.mark.anyio

SEAMS_IN_ORDER = [
    "prompt_submit",
    "pre_step",
    "system_prompt",
    "session_prefix",
    "request_config",
    "model_stream",
    "step_result",
    "approval",
    "tool",
    "post_tool",
    "continuation",
    "turn_stop",
]
"""The seams in the order one turn reaches them (tools: the first step calls one)."""

TOOL_SEAMS = ("approval", "tool", "post_tool")
"""Reached only when the model asks for a tool call."""

Ending = Literal["raise", "return"]


def _install_blocker(
    seam: str, seams: Seams, trace: Trace, entered: anyio.Event, ending: Ending
) -> tuple[FakeModel, list[FakeTool]]:
    """Put a listener on `seam` that waits for the signal, then raises or returns; build the
    model and tools so the turn reaches that seam."""

    async def block(signal: TurnSignal) -> None:
        entered.set()
        await signal.wait()
        if ending == "raise":
            signal.raise_if_aborted()

    async def prompt_submit(submission: PromptSubmission, signal: TurnSignal) -> Block | None:
        await block(signal)
        return None

    async def system_prompt(parts: list[str], signal: TurnSignal) -> None:
        await block(signal)

    async def session_prefix(prefix: list[ConversationItem], signal: TurnSignal) -> None:
        await block(signal)

    async def pre_step(info: StepInfo, signal: TurnSignal) -> None:
        await block(signal)

    async def request_config(request: ModelRequest, signal: TurnSignal) -> ModelRequest:
        await block(signal)
        return request

    async def step_result(result: StepResult, signal: TurnSignal) -> None:
        await block(signal)

    async def approval(request: ToolCallRequest, signal: TurnSignal) -> Deny | None:
        await block(signal)
        return None

    async def post_tool(request: ToolCallRequest, output: ToolOutput, signal: TurnSignal) -> None:
        await block(signal)

    async def continuation(progress: TurnProgress, signal: TurnSignal) -> None:
        await block(signal)

    async def turn_stop(progress: TurnProgress, signal: TurnSignal) -> None:
        await block(signal)

    async def model_action(request: ModelRequest, signal: TurnSignal) -> object:
        await block(signal)
        return END_STREAM

    async def tool_behaviour(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        await block(signal)
        return ToolOutput("stopped early")

    listeners: dict[str, tuple[list[Any], Any]] = {
        "prompt_submit": (seams.prompt_submit, prompt_submit),
        "system_prompt": (seams.system_prompt, system_prompt),
        "session_prefix": (seams.session_prefix, session_prefix),
        "pre_step": (seams.pre_step, pre_step),
        "request_config": (seams.request_config, request_config),
        "step_result": (seams.step_result, step_result),
        "approval": (seams.approval, approval),
        "post_tool": (seams.post_tool, post_tool),
        "continuation": (seams.continuation, continuation),
        "turn_stop": (seams.turn_stop, turn_stop),
    }
    if seam in listeners:
        target, listener = listeners[seam]
        target.append(listener)

    first: Response = [say("working"), finish()]
    if seam == "model_stream":
        first = [say("partial"), model_action]
    elif seam in TOOL_SEAMS:
        first = [call("probe"), finish("tool_calls")]
    tool = FakeTool("probe", tool_behaviour if seam == "tool" else None, trace=trace)
    return FakeModel(first, trace=trace), [tool]


@pytest.mark.parametrize("ending", ["raise", "return"])
@pytest.mark.parametrize("seam", SEAMS_IN_ORDER)
async def test_cancel_releases_a_listener_waiting_on_the_signal_at_every_seam(
    seam: str, ending: Ending
) -> None:
    trace = Trace()
    seams = trace.seams()
    entered = anyio.Event()
    model, tools = _install_blocker(seam, seams, trace, entered, ending)
    async with running_agent(model, tools=tools, seams=seams) as handle:
        agent = handle.agent
        ticket = agent.followup(text("hello"))
        await entered.wait()
        agent.cancel()
        assert await ticket.wait() == rec.Aborted()
        await agent.when_idle()
        assert agent.status == "idle"

        # Nothing after the waiting seam ran, and every seam saw the one signal, aborted by
        # the user cause.
        assert trace.names[-1] == seam
        expected = SEAMS_IN_ORDER[: SEAMS_IN_ORDER.index(seam) + 1]
        if seam not in TOOL_SEAMS:  # that turn's model asked for no tool
            expected = [name for name in expected if name not in TOOL_SEAMS]
        assert trace.names == expected
        signal = trace.signals[0]
        assert all(s is signal for s in trace.signals)
        assert signal.reason == UserCancel()

        session = agent.session
        if seam == "prompt_submit":
            assert "turn/start" not in kinds(session)
            assert list(session.records) == []
        else:
            assert kinds(session)[0] == "turn/start"
            assert kinds(session)[-1] == "turn/end"
            (end,) = turn_ends(session)
            assert end.outcome == rec.Aborted()
            assert session.open_tool_calls(end.turn_id) == []


async def test_one_signal_object_per_turn_and_a_fresh_one_for_the_next_turn() -> None:
    trace = Trace()
    seams = trace.seams()
    first: Response = [call("probe"), finish("tool_calls")]
    second: Response = [say("done"), finish()]
    model = FakeModel(first, second, first, second, trace=trace)
    tool = FakeTool("probe", trace=trace)
    async with running_agent(model, tools=[tool], seams=seams) as handle:
        agent = handle.agent
        assert await agent.followup(text("one")).wait() == rec.Completed()
        turn_one = list(trace.calls)
        assert await agent.followup(text("two")).wait() == rec.Completed()
        turn_two = trace.calls[len(turn_one) :]

    every_seam = set(SEAMS_IN_ORDER)
    for calls in (turn_one, turn_two):
        assert {name for name, _ in calls} == every_seam
        signal = calls[0][1]
        assert all(s is signal for _, s in calls)
        assert not signal.aborted
    assert turn_one[0][1] is not turn_two[0][1]


async def test_prompt_submission_may_rewrite_the_prompt_and_add_context() -> None:
    seams = Seams()

    async def rewrite(submission: PromptSubmission, signal: TurnSignal) -> Block | None:
        submission.content = text("rewritten prompt")
        submission.context.append(text("added context"))
        return None

    seams.prompt_submit.append(rewrite)
    model = FakeModel()
    async with running_agent(model, seams=seams) as handle:
        agent = handle.agent
        assert await agent.followup(text("original prompt")).wait() == rec.Completed()
        session = agent.session
        assert user_texts(session, "prompt") == ["rewritten prompt"]
        assert user_texts(session, "context") == ["added context"]
        assert kinds(session)[:3] == ["turn/start", "message/user", "message/user"]
        assert request_user_texts(model.requests[0]) == ["rewritten prompt", "added context"]
        assert "original prompt" not in user_texts(session)


async def test_prompt_submission_block_opens_no_turn() -> None:
    seams = Seams()

    async def refuse(submission: PromptSubmission, signal: TurnSignal) -> Block | None:
        return Block("not today")

    seams.prompt_submit.append(refuse)
    model = FakeModel()
    async with running_agent(model, seams=seams) as handle:
        agent = handle.agent
        assert await agent.followup(text("blocked")).wait() == Blocked("not today")
        await agent.when_idle()
        assert list(agent.session.records) == []
        assert model.requests == []
        assert agent.status == "idle"


async def test_blocked_prompt_does_not_stop_the_next_one() -> None:
    seams = Seams()

    async def block_first(submission: PromptSubmission, signal: TurnSignal) -> Block | None:
        first = submission.content[0]
        assert isinstance(first, rec.TextPart)
        return Block("no") if first.text == "blocked" else None

    seams.prompt_submit.append(block_first)
    async with running_agent(FakeModel(), seams=seams) as handle:
        agent = handle.agent
        blocked = agent.followup(text("blocked"))
        allowed = agent.followup(text("allowed"))
        assert await blocked.wait() == Blocked("no")
        assert await allowed.wait() == rec.Completed()
        assert user_texts(agent.session) == ["allowed"]
        assert kinds(agent.session).count("turn/start") == 1
