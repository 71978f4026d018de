"""The public face of the runtime (acp_server/agent/agent.py): quiescence and end of life
(`when_idle()`, `AgentHandle.dispose()`), and the one stop verb: `cancel()` defaults to the user
cause, hands the turn a detached copy, first cancel wins, no public `abort`, and mypy --strict
rejects any other cancel vocabulary. The signal and the causes themselves:
tests/test_cancellation.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from acp_server.agent.agent import Agent, AgentHandle
from acp_server.agent.events import Status
from acp_server.agent.inbox import Dropped, PromptTicket
from acp_server.cancellation import CancelCause, ParentCancel, TurnSignal, UserCancel
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
    waiting_tool,
)

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


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


# --- through the agent ------------------------------------------------------------------------


@dataclass
class ParkedTurn:
    """A turn whose only tool waits on the turn signal, running now."""

    agent: Agent
    ticket: PromptTicket
    signals: list[TurnSignal]  # what the model double was handed, in order
    causes: list[CancelCause]  # what the agent's cancel-requested listeners heard


@asynccontextmanager
async def parked_turn() -> AsyncIterator[ParkedTurn]:
    entered = anyio.Event()
    model = FakeModel([call()])
    async with running_agent(model, tools=[FakeTool(behaviour=waiting_tool(entered))]) as handle:
        agent = handle.agent
        causes: list[CancelCause] = []
        agent.on_cancel_requested(causes.append)
        ticket = agent.followup(text("go"))
        await entered.wait()
        yield ParkedTurn(agent, ticket, model.signals, causes)


async def test_agent_cancel_defaults_to_user_cause() -> None:
    async with parked_turn() as turn:
        turn.agent.cancel()
        assert turn.causes == [UserCancel()]
        assert type(turn.causes[0]) is UserCancel
        assert turn.signals[0].reason == UserCancel()
        assert await turn.ticket.wait() == rec.Aborted()


async def test_agent_signal_reason_is_detached_copy_of_the_callers_cause() -> None:
    async with parked_turn() as turn:
        cause = ParentCancel()
        turn.agent.cancel(cause)
        reason = turn.signals[0].reason
        assert reason == cause
        assert reason is not cause
        assert type(reason).__struct_config__.frozen is True
        hash(reason)  # frozen structs are hashable; mutable ones raise TypeError
        assert await turn.ticket.wait() == rec.Aborted()


async def test_repeated_cancel_first_wins_and_notifies_once() -> None:
    async with parked_turn() as turn:
        turn.agent.cancel(UserCancel())
        turn.agent.cancel(ParentCancel())
        turn.agent.cancel(ParentCancel(), keep_inbox=True)
        assert turn.signals[0].reason == UserCancel()
        assert turn.causes == [UserCancel()]
        assert await turn.ticket.wait() == rec.Aborted()


async def test_repeated_cancel_still_clears_newly_queued_work() -> None:
    entered = anyio.Event()
    release = anyio.Event()
    model = FakeModel([call()])
    # The tool ignores the signal, so the aborted turn (and its holder) stays open a while.
    async with running_agent(model, tools=[FakeTool(behaviour=gated_tool(entered, release))]) as h:
        agent = h.agent
        first = agent.followup(text("go"))
        await entered.wait()
        agent.cancel()
        queued = agent.followup(text("queued after the first cancel"))
        assert queued.result is None
        agent.cancel(ParentCancel())
        assert queued.result == Dropped()  # cleared by the second cancel, at once
        release.set()
        assert await first.wait() == rec.Aborted()
        await agent.when_idle()
        assert len(model.requests) == 1


# --- the public surface and its static typing -------------------------------------------------


def test_agent_has_no_public_abort_and_only_the_handle_disposes() -> None:
    assert not hasattr(Agent, "abort")
    public = {name for name in dir(Agent) if not name.startswith("_")}
    assert not any("abort" in name for name in public)
    # cancel() is the one stop verb: no other way to stop work is public.
    assert not public & {"dispose", "withdraw", "stop", "kill", "interrupt"}
    assert {"followup", "steer", "inject", "cancel", "when_idle", "status", "session", "id"} <= (
        public
    )
    assert callable(AgentHandle.dispose)


_TYPING_PROBE = """\
from acp_server.agent.agent import Agent
from acp_server.cancellation import Disposed, ParentCancel, UserCancel


def use(agent: Agent) -> None:
    agent.cancel()
    agent.cancel(UserCancel())
    agent.cancel(ParentCancel(), keep_inbox=True)
    agent.cancel("user")  # line 9
    agent.cancel(Disposed())  # line 10
    agent.abort()  # line 11
"""


def test_mypy_rejects_a_string_or_disposed_cause_and_an_abort_call(tmp_path: Path) -> None:
    probe = tmp_path / "cancel_probe.py"
    probe.write_text(textwrap.dedent(_TYPING_PROBE), encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            "/dev/null",
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            "--no-error-summary",
            "--show-error-codes",
            "--no-color-output",
            str(probe),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in result.stdout.splitlines() if line.startswith(str(probe))]
    by_line = {int(line.split(":")[1]): line for line in errors}
    assert result.returncode == 1, result.stdout + result.stderr
    assert sorted(by_line) == [9, 10, 11], result.stdout
    assert '"str"' in by_line[9] and "[arg-type]" in by_line[9]
    assert '"Disposed"' in by_line[10] and "[arg-type]" in by_line[10]
    assert '"abort"' in by_line[11] and "[attr-defined]" in by_line[11]
