"""The initiator scope: seams, the model and tools see the exact Agent that drives them.

It carries only the Agent (never a signal); concurrent agents see themselves with independent
signals; a child agent started from a parent's tool shadows the parent only inside itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from acp_server.agent.agent import Agent, AgentHandle
from acp_server.agent.initiator import current_initiator
from acp_server.agent.seams import PromptSubmission, Seams, StepInfo
from acp_server.cancellation import CancelCause, ParentCancel, TurnSignal
from acp_server.session import records as rec
from acp_server.tools.base import ToolOutput
from tests.support.agent_harness import (
    DEADLINE,
    FakeModel,
    FakeTool,
    Trace,
    call,
    finish,
    make_handle,
    say,
    text,
    waiting_tool,
)

pytestmark = pytest.mark.anyio


async def test_seams_model_and_tools_see_the_exact_agent() -> None:
    trace = Trace()
    model = FakeModel([call("probe"), finish("tool_calls")], trace=trace)
    tool = FakeTool("probe", trace=trace)
    assert current_initiator() is None
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = make_handle(tg, model, tools=[tool], seams=trace.seams())
            agent = handle.agent
            assert await agent.followup(text("q")).wait() == rec.Completed()
            await handle.dispose()
    assert len(trace.initiators) > 10
    assert all(seen is agent for _, seen in trace.initiators)
    assert tool.initiators == [agent]
    assert current_initiator() is None  # the test's own task was never inside the scope


async def test_concurrent_agents_see_themselves_and_have_independent_signals() -> None:
    entered_a, entered_b = anyio.Event(), anyio.Event()
    model_a = FakeModel([call("probe"), finish("tool_calls")])
    model_b = FakeModel([call("probe"), finish("tool_calls")])
    tool_a = FakeTool("probe", waiting_tool(entered_a))
    release_b = anyio.Event()
    seen_b: list[tuple[Agent | None, bool]] = []

    async def b_behaviour(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        entered_b.set()
        await release_b.wait()
        seen_b.append((current_initiator(), signal.aborted))
        return ToolOutput("b done")

    tool_b = FakeTool("probe", b_behaviour)
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            a = make_handle(tg, model_a, tools=[tool_a], session_id="a")
            b = make_handle(tg, model_b, tools=[tool_b], session_id="b")
            ticket_a = a.agent.followup(text("for a"))
            ticket_b = b.agent.followup(text("for b"))
            await entered_a.wait()
            await entered_b.wait()
            signal_a, signal_b = model_a.signals[0], model_b.signals[0]
            assert signal_a is not signal_b
            a.agent.cancel()
            assert signal_a.aborted
            assert not signal_b.aborted
            assert await ticket_a.wait() == rec.Aborted()
            release_b.set()
            assert await ticket_b.wait() == rec.Completed()
            await a.dispose()
            await b.dispose()
    assert tool_a.initiators == [a.agent]
    assert tool_b.initiators == [b.agent]
    assert seen_b == [(b.agent, False)]
    assert model_a.initiators[0] is a.agent
    assert model_b.initiators[0] is b.agent


async def test_child_agent_shadows_the_initiator_only_inside_itself() -> None:
    child_seen: list[tuple[str, Agent | None]] = []
    parent_seen: list[tuple[str, Agent | None]] = []
    children: list[AgentHandle] = []

    async def child_submit(submission: PromptSubmission, signal: TurnSignal) -> None:
        child_seen.append(("child prompt_submit", current_initiator()))

    async def child_pre_step(info: StepInfo, signal: TurnSignal) -> None:
        child_seen.append(("child pre_step", current_initiator()))

    child_model = FakeModel(
        [call("child_tool"), finish("tool_calls")], [say("child answer"), finish()]
    )
    child_tool = FakeTool("child_tool")

    async with anyio.create_task_group() as tg:

        async def spawn_child(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
            parent_seen.append(("parent tool before", current_initiator()))
            child = make_handle(
                tg,
                child_model,
                tools=[child_tool],
                seams=Seams(prompt_submit=[child_submit], pre_step=[child_pre_step]),
                session_id="child",
            )
            children.append(child)
            remove = signal.on_abort(lambda: child.agent.cancel(ParentCancel()))
            try:
                ticket = child.agent.followup(text("child task"))
                await child.agent.when_idle()
                outcome = await ticket.wait()
            finally:
                remove()
                await child.dispose()
            parent_seen.append(("parent tool after", current_initiator()))
            return ToolOutput(
                f"child said {child.agent.session.last_assistant_text()!r}: {outcome}"
            )

        parent_model = FakeModel([call("task"), finish("tool_calls")])
        with anyio.fail_after(DEADLINE):
            parent = make_handle(tg, parent_model, tools=[FakeTool("task", spawn_child)])
            assert await parent.agent.followup(text("delegate")).wait() == rec.Completed()
            await parent.dispose()

    (child,) = children
    assert child_seen and all(seen is child.agent for _, seen in child_seen)
    assert child_tool.initiators == [child.agent]
    assert all(seen is child.agent for seen in child_model.initiators)
    assert parent_seen == [
        ("parent tool before", parent.agent),
        ("parent tool after", parent.agent),
    ]
    assert all(seen is parent.agent for seen in parent_model.initiators)


async def test_parent_abort_reaches_the_child_as_a_parent_cause() -> None:
    child_causes: list[CancelCause] = []
    child_entered = anyio.Event()
    outcomes: list[object] = []

    async with anyio.create_task_group() as tg:

        async def spawn_child(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
            child = make_handle(
                tg,
                FakeModel([call("wait"), finish("tool_calls")]),
                tools=[FakeTool("wait", waiting_tool(child_entered))],
                session_id="child",
            )
            child.agent.on_cancel_requested(child_causes.append)
            remove = signal.on_abort(lambda: child.agent.cancel(ParentCancel()))
            try:
                ticket = child.agent.followup(text("child task"))
                outcomes.append(await ticket.wait())
            finally:
                remove()
                await child.dispose()
            signal.raise_if_aborted()
            return ToolOutput("unreachable")

        with anyio.fail_after(DEADLINE):
            parent = make_handle(
                tg,
                FakeModel([call("task"), finish("tool_calls")]),
                tools=[FakeTool("task", spawn_child)],
            )
            ticket = parent.agent.followup(text("delegate"))
            await child_entered.wait()
            await wait_all_tasks_blocked()
            parent.agent.cancel()
            assert await ticket.wait() == rec.Aborted()
            await parent.dispose()

    assert child_causes == [ParentCancel()]
    assert outcomes == [rec.Aborted()]
