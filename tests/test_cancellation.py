"""The cancellation contract (acp_server/cancellation.py): typed causes, the turn signal, the
holder, first-wins.

Causes are a closed, frozen, `kind`-tagged union; the signal's reason is a detached frozen copy
and the first cancel wins; a linked scope interrupts a blocked await. How `Agent.cancel()` uses
them (the default user cause, no public `abort`, mypy rejecting other vocabulary) is in
tests/agent/test_agent.py.
"""

from __future__ import annotations

import typing

import anyio
import anyio.lowlevel
import msgspec
import pytest
from anyio import wait_all_tasks_blocked

from acp_server.cancellation import (
    CancelCause,
    Disposed,
    ParentCancel,
    TurnAborted,
    TurnCancellation,
    TurnSignal,
    UserCancel,
)
from tests.support.backends import anyio_backend  # noqa: F401 - on asyncio and trio

pytestmark = pytest.mark.anyio


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
