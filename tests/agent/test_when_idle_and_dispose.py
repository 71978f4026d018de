"""Quiescence and end of life: `when_idle()` and `AgentHandle.dispose()`."""

from __future__ import annotations

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from acp_server.agent.events import Status
from acp_server.agent.inbox import Dropped, PromptTicket
from acp_server.session import records as rec
from tests.support.agent_harness import (
    DEADLINE,
    FakeModel,
    FakeTool,
    call,
    finish,
    gated_model,
    gated_tool,
    make_handle,
    running_agent,
    text,
    turn_ends,
    user_texts,
)

pytestmark = pytest.mark.anyio


async def test_when_idle_resolves_at_once_for_a_fresh_agent() -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        with anyio.fail_after(DEADLINE):
            await agent.when_idle()
        assert agent.status == "idle"


async def test_when_idle_returns_without_suspending_once_idle() -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        assert await agent.followup(text("q")).wait() == rec.Completed()
        await agent.when_idle()
        # Idle now: a second observer does not have to wait for anything.
        with anyio.CancelScope() as scope:
            scope.cancel()
            await agent.when_idle()
            returned = True
        assert returned
        assert not scope.cancelled_caught


async def test_when_idle_resolves_only_after_every_queued_turn_finished() -> None:
    model, entered, release = gated_model()
    async with running_agent(model) as handle:
        agent = handle.agent
        tickets = [agent.followup(text(f"prompt {i}")) for i in range(3)]
        snapshot: list[list[object]] = []

        async def observe() -> None:
            await agent.when_idle()
            snapshot.append([t.result for t in tickets])

        async with anyio.create_task_group() as tg:
            tg.start_soon(observe)
            await entered.wait()
            await wait_all_tasks_blocked()
            assert snapshot == []
            release.set()
        assert snapshot == [[rec.Completed()] * 3]
        assert user_texts(agent.session) == ["prompt 0", "prompt 1", "prompt 2"]


async def test_when_idle_follows_work_queued_by_an_idle_status_listener() -> None:
    model, entered, release = gated_model()
    async with running_agent(model) as handle:
        agent = handle.agent
        chained: list[PromptTicket] = []

        def on_status(status: Status) -> None:
            if status == "idle" and not chained:
                chained.append(agent.followup(text("chained")))

        agent.on_status(on_status)
        first = agent.followup(text("first"))
        snapshot: list[object] = []

        async def observe() -> None:
            await agent.when_idle()
            snapshot.append(chained[0].result if chained else None)

        async with anyio.create_task_group() as tg:
            tg.start_soon(observe)
            await entered.wait()
            release.set()
        assert first.result == rec.Completed()
        assert snapshot == [rec.Completed()]


async def test_dispose_is_idempotent_and_concurrent_callers_both_return() -> None:
    entered = anyio.Event()
    release = anyio.Event()
    model = FakeModel([call("probe"), finish("tool_calls")])
    tool = FakeTool("probe", gated_tool(entered, release))
    returned: list[str] = []
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = make_handle(tg, model, tools=[tool])
            agent = handle.agent
            ticket = agent.followup(text("q"))
            await entered.wait()

            async def dispose(name: str) -> None:
                await handle.dispose()
                returned.append(name)

            tg.start_soon(dispose, "a")
            tg.start_soon(dispose, "b")
            await wait_all_tasks_blocked()
            assert returned == []  # both wait for the uncooperative tool
            release.set()
        assert sorted(returned) == ["a", "b"]
        await handle.dispose()  # once more, after the fact: returns at once
    assert ticket.result == rec.DisposedOutcome()
    assert len(turn_ends(agent.session)) == 1
    assert agent.status == "disposed"


async def test_followup_after_dispose_resolves_dropped_and_nothing_runs() -> None:
    model = FakeModel()
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = make_handle(tg, model)
            agent = handle.agent
            await handle.dispose()
            ticket = agent.followup(text("too late"))
            assert ticket.result == Dropped()
            assert await ticket.wait() == Dropped()
            agent.steer(text("steer too late"))
            agent.inject(text("inject too late"))
            agent.cancel()
            await agent.when_idle()
    assert list(agent.session.records) == []
    assert model.requests == []
    assert agent.status == "disposed"


async def test_dispose_drops_queued_followups_before_they_run() -> None:
    model, entered, release = gated_model()
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = make_handle(tg, model)
            agent = handle.agent
            running = agent.followup(text("running"))
            queued = agent.followup(text("queued"))
            await entered.wait()
            tg.start_soon(handle.dispose)
            await wait_all_tasks_blocked()
            assert queued.result == Dropped()
            release.set()
    assert running.result == rec.DisposedOutcome()
    assert user_texts(agent.session) == ["running"]
