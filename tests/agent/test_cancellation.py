"""The cancellation contract: typed causes, the turn signal, first-wins, the public stop surface.

Causes are a closed, frozen, `kind`-tagged union; `Agent.cancel()` defaults to the user cause;
the signal's reason is a detached frozen copy and the first cancel wins; `Agent` has no
public step-only `abort`, and mypy --strict rejects any other cancel vocabulary.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.lowlevel
import msgspec
import pytest
from anyio import wait_all_tasks_blocked

from acp_server.agent.agent import Agent, AgentHandle
from acp_server.agent.inbox import Dropped, PromptTicket
from acp_server.cancellation import (
    CancelCause,
    Disposed,
    ParentCancel,
    TurnAborted,
    TurnCancellation,
    TurnSignal,
    UserCancel,
)
from acp_server.session import records as rec
from tests.support.agent_harness import (
    FakeModel,
    FakeTool,
    call,
    gated_tool,
    running_agent,
    text,
    waiting_tool,
)

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


# --- the cause vocabulary --------------------------------------------------------------------


def test_cancel_cause_is_exactly_user_or_parent() -> None:
    assert typing.get_args(CancelCause) == (UserCancel, ParentCancel)


@pytest.mark.parametrize(
    ("cause", "encoded"),
    [(UserCancel(), b'{"kind":"user"}'), (ParentCancel(), b'{"kind":"parent"}')],
)
def test_cancel_causes_encode_as_kind_tags_and_round_trip(
    cause: CancelCause, encoded: bytes
) -> None:
    assert msgspec.json.encode(cause) == encoded
    assert msgspec.json.decode(encoded, type=CancelCause) == cause
    assert type(msgspec.json.decode(encoded, type=CancelCause)) is type(cause)


@pytest.mark.parametrize("cls", [UserCancel, ParentCancel, Disposed])
def test_interruptions_are_frozen_and_hashable(cls: type[msgspec.Struct]) -> None:
    assert cls.__struct_config__.frozen is True
    value = cls()
    assert hash(value) == hash(cls())
    assert value == cls()


def test_unknown_cause_kind_does_not_decode() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"kind":"disposed"}', type=CancelCause)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"kind":"timeout"}', type=CancelCause)


# --- the signal and its holder ---------------------------------------------------------------


async def test_fresh_signal_is_live_without_reason() -> None:
    signal = TurnCancellation().signal
    assert signal.aborted is False
    assert signal.reason is None
    signal.raise_if_aborted()  # does not raise


async def test_abort_sets_reason_and_raise_if_aborted_raises_turn_aborted() -> None:
    holder = TurnCancellation()
    assert holder.abort(UserCancel()) is True
    assert holder.signal.aborted is True
    assert holder.signal.reason == UserCancel()
    with pytest.raises(TurnAborted):
        holder.signal.raise_if_aborted()


async def test_holder_reason_is_a_detached_frozen_copy() -> None:
    holder = TurnCancellation()
    cause = ParentCancel()
    holder.abort(cause)
    reason = holder.signal.reason
    assert reason == cause
    assert reason is not cause
    assert type(reason) is ParentCancel
    assert type(reason).__struct_config__.frozen is True


async def test_holder_first_abort_wins() -> None:
    holder = TurnCancellation()
    assert holder.abort(UserCancel()) is True
    assert holder.abort(ParentCancel()) is False
    assert holder.abort(Disposed()) is False
    assert holder.signal.reason == UserCancel()


async def test_wait_blocks_until_abort_then_returns() -> None:
    holder = TurnCancellation()
    woke: list[bool] = []

    async def waiter() -> None:
        await holder.signal.wait()
        woke.append(holder.signal.aborted)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            await wait_all_tasks_blocked()
            assert woke == []
            holder.abort(UserCancel())
    assert woke == [True]


async def test_wait_returns_at_once_when_already_aborted() -> None:
    holder = TurnCancellation()
    holder.abort(UserCancel())
    returned = anyio.Event()

    async def waiter() -> None:
        await holder.signal.wait()
        returned.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        # Bounded by scheduling, not a clock: once every task is blocked, the waiter is done.
        await anyio.wait_all_tasks_blocked()
        assert returned.is_set()
        tg.cancel_scope.cancel()


async def test_on_abort_callbacks_run_synchronously_in_order_once() -> None:
    holder = TurnCancellation()
    seen: list[str] = []
    holder.signal.on_abort(lambda: seen.append("first"))
    holder.signal.on_abort(lambda: seen.append("second"))
    assert seen == []
    holder.abort(UserCancel())
    assert seen == ["first", "second"]  # already ran when abort() returned
    holder.abort(ParentCancel())
    assert seen == ["first", "second"]


async def test_on_abort_after_abort_runs_callback_at_once() -> None:
    holder = TurnCancellation()
    holder.abort(UserCancel())
    seen: list[str] = []
    holder.signal.on_abort(lambda: seen.append("late"))
    assert seen == ["late"]


async def test_on_abort_remover_detaches_the_callback() -> None:
    holder = TurnCancellation()
    seen: list[str] = []
    remove = holder.signal.on_abort(lambda: seen.append("removed"))
    holder.signal.on_abort(lambda: seen.append("kept"))
    remove()
    remove()  # idempotent
    holder.abort(UserCancel())
    assert seen == ["kept"]


async def test_failing_abort_callback_neither_stops_others_nor_the_abort() -> None:
    holder = TurnCancellation()
    seen: list[str] = []

    def explode() -> None:
        raise RuntimeError("callback failure")

    holder.signal.on_abort(explode)
    holder.signal.on_abort(lambda: seen.append("after"))
    assert holder.abort(UserCancel()) is True
    assert holder.signal.aborted
    assert seen == ["after"]


async def test_linked_scope_interrupts_a_blocked_await_on_abort() -> None:
    holder = TurnCancellation()
    outcome: list[object] = []

    async def adapter(signal: TurnSignal) -> None:
        with signal.linked_scope() as scope:
            await anyio.sleep_forever()
        outcome.append(scope.cancelled_caught)
        try:
            signal.raise_if_aborted()
        except TurnAborted:
            outcome.append("aborted")

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(adapter, holder.signal)
            await wait_all_tasks_blocked()
            assert outcome == []
            holder.abort(UserCancel())
    assert outcome == [True, "aborted"]


async def test_linked_scope_entered_after_abort_is_cancelled_at_once() -> None:
    holder = TurnCancellation()
    holder.abort(ParentCancel())
    with anyio.fail_after(10):
        with holder.signal.linked_scope() as scope:
            await anyio.sleep_forever()
    assert scope.cancelled_caught


async def test_linked_scope_lets_work_finish_when_not_aborted() -> None:
    holder = TurnCancellation()
    with holder.signal.linked_scope() as scope:
        await anyio.lowlevel.checkpoint()
        finished = True
    assert finished
    assert not scope.cancel_called
    holder.abort(UserCancel())  # after the block: the scope is no longer linked
    assert not scope.cancel_called


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
