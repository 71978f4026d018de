"""Rules of the seed contract that had no test failing when they broke, and the two cancel
edges the seed notes leave open, as decided in
docs/rfc/implemented/architecture/2026-12-01-cancel-edges.md:

- staged steering does not survive a cancel, keep_inbox included: it is never recorded, never
  carried into the next turn and never becomes a turn of its own;
- a cancel before any turn is claimed that clears queued work is effective, so it emits
  cancel-requested (before the work is cleared); one that clears nothing emits nothing;
- an exception raised after the cancel does not turn the aborted turn into an error.
"""

from __future__ import annotations

import json

import anyio
import pytest

from acp_server.acp.methods.prompts import stop_reason_for
from acp_server.agent.inbox import Dropped, PromptTicket
from acp_server.agent.seams import PromptSubmission, Seams, StepResult
from acp_server.cancellation import CancelCause, ParentCancel, TurnSignal, UserCancel
from acp_server.models.base import ModelError, ModelRequest
from acp_server.session import records as rec
from acp_server.verdicts import Block
from tests.support.agent_harness import (
    FakeModel,
    FakeTool,
    call,
    finish,
    request_user_texts,
    running_agent,
    say,
    text,
    turn_ends,
    user_texts,
    waiting_tool,
)
from tests.support.backends import anyio_backend  # noqa: F401 - on asyncio and trio, as in tests/agent

pytestmark = pytest.mark.anyio


# --- staged steering and a keep-inbox cancel ------------------------------------------------------


async def test_staged_steering_does_not_survive_a_keep_inbox_cancel() -> None:
    entered = anyio.Event()
    model = FakeModel([call("probe"), finish("tool_calls")])
    tools = [FakeTool("probe", waiting_tool(entered))]
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        first = agent.followup(text("running"))
        await entered.wait()
        agent.steer(text("staged before the cancel"))
        queued = agent.followup(text("queued"))
        agent.cancel(keep_inbox=True)
        agent.steer(text("staged after the cancel"))  # the aborted turn is still closing
        assert await first.wait() == rec.Aborted()
        assert await queued.wait() == rec.Completed()
        await agent.when_idle()
        assert user_texts(agent.session, "steering") == []
        assert user_texts(agent.session, "prompt") == ["running", "queued"]
        assert request_user_texts(model.requests[-1]) == ["running", "queued"]
        assert [end.outcome for end in turn_ends(agent.session)] == [rec.Aborted(), rec.Completed()]


async def test_steering_staged_during_an_aborted_admission_does_not_reach_the_next_turn() -> None:
    entered = anyio.Event()
    seams = Seams()
    box: list[PromptTicket] = []

    async def admit(submission: PromptSubmission, signal: TurnSignal) -> Block | None:
        if not box:  # only the first prompt waits
            box.append(PromptTicket([]))
            entered.set()
            await signal.wait()
        return None

    seams.prompt_submit.append(admit)
    model = FakeModel()
    async with running_agent(model, seams=seams) as handle:
        agent = handle.agent
        first = agent.followup(text("being admitted"))
        await entered.wait()
        agent.steer(text("steering for the first"))
        queued = agent.followup(text("queued"))
        agent.cancel(keep_inbox=True)
        assert await first.wait() == rec.Aborted()
        assert await queued.wait() == rec.Completed()
        assert user_texts(agent.session) == ["queued"]
        assert request_user_texts(model.requests[0]) == ["queued"]


# --- a pre-run cancel that clears queued work --------------------------------------------------


@pytest.mark.parametrize("cause", [UserCancel(), ParentCancel()])
async def test_a_pre_run_cancel_that_clears_work_emits_cancel_requested_first(
    cause: CancelCause,
) -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        queued = agent.followup(text("queued, never claimed"))
        heard: list[tuple[CancelCause, object]] = []
        late: list[PromptTicket] = []

        def listener(requested: CancelCause) -> None:
            heard.append((requested, queued.result))
            late.append(agent.followup(text("queued by the listener")))

        agent.on_cancel_requested(listener)
        agent.cancel(cause)  # synchronously: the driver has not claimed anything yet
        assert heard == [(cause, None)]  # before the queued work was cleared
        assert type(heard[0][0]) is type(cause)
        assert await queued.wait() == Dropped()
        assert await late[0].wait() == Dropped()  # cleared with the rest
        await agent.when_idle()
        assert list(agent.session.records) == []


async def test_a_pre_run_cancel_that_clears_nothing_emits_nothing() -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        heard: list[CancelCause] = []
        agent.on_cancel_requested(heard.append)
        kept = agent.followup(text("kept"))
        agent.cancel(keep_inbox=True)
        assert heard == []
        assert await kept.wait() == rec.Completed()
        agent.cancel()  # idle, nothing queued
        assert heard == []


# --- an error raised after the cancel ----------------------------------------------------------


async def test_a_step_raising_after_the_cancel_still_ends_aborted() -> None:
    entered = anyio.Event()
    seams = Seams()

    async def step_result(result: StepResult, signal: TurnSignal) -> None:
        entered.set()
        await signal.wait()
        raise RuntimeError("a listener broke while the turn was being cancelled")

    seams.step_result.append(step_result)
    async with running_agent(FakeModel(), seams=seams) as handle:
        agent = handle.agent
        ticket = agent.followup(text("go"))
        await entered.wait()
        agent.cancel()
        result = await ticket.wait()
        assert result == rec.Aborted()
        assert stop_reason_for(result) == "cancelled"
        (end,) = turn_ends(agent.session)
        assert json.loads(rec.encode_record(end))["outcome"] == {"kind": "aborted"}


async def test_a_model_failing_after_the_cancel_still_ends_aborted() -> None:
    entered = anyio.Event()

    async def fail_when_cut(request: ModelRequest, signal: TurnSignal) -> object:
        entered.set()
        await signal.wait()
        raise ModelError("stream cut: upstream said 502 Bad Gateway", code="http_502")

    async with running_agent(FakeModel([say("partial"), fail_when_cut])) as handle:
        agent = handle.agent
        ticket = agent.followup(text("go"))
        await entered.wait()
        agent.cancel()
        result = await ticket.wait()
        assert result == rec.Aborted()
        assert stop_reason_for(result) == "cancelled"
        (end,) = turn_ends(agent.session)
        assert json.loads(rec.encode_record(end))["outcome"] == {"kind": "aborted"}
