"""The turn-lifecycle events a wire that ends turns by state (ACP v2) is built on: every started
turn is told `TurnStarting` first and `TurnSettled` last, after its durability flush and before
its ticket resolves; the prompt's insertion is told (`UserMessageRecorded`) before the ticket
hears it. Pinned by the order of events, records and ticket states, never by timing."""

from __future__ import annotations

import pytest

from acp_server.agent.events import (
    AgentEvent,
    MessageChunk,
    TurnEnded,
    TurnSettled,
    TurnStarting,
    UserMessageRecorded,
)
from acp_server.agent.inbox import Blocked, Dropped
from acp_server.agent.seams import PromptSubmission, Seams
from acp_server.cancellation import TurnSignal
from acp_server.models.base import Usage
from acp_server.session import records as rec
from acp_server.verdicts import Block
from tests.support.agent_harness import FakeModel, gated_model, running_agent, say, text

pytestmark = pytest.mark.anyio


def _turn_of(event: AgentEvent) -> str | None:
    return getattr(event, "turn_id", None)


async def test_each_turn_is_bracketed_by_starting_and_settled_and_nothing_of_it_follows() -> None:
    model = FakeModel([say("one")], [say("two")])
    async with running_agent(model) as handle:
        agent = handle.agent
        events: list[AgentEvent] = []

        async def sink(event: AgentEvent) -> None:
            events.append(event)

        agent.subscribe(sink)
        first = agent.followup(text("first"))
        second = agent.followup(text("second"))
        assert await first.wait() == rec.Completed()
        assert await second.wait() == rec.Completed()
    starts = [i for i, e in enumerate(events) if isinstance(e, TurnStarting)]
    settles = [i for i, e in enumerate(events) if isinstance(e, TurnSettled)]
    assert len(starts) == len(settles) == 2
    assert starts[0] == 0 and settles[0] < starts[1] and settles[1] == len(events) - 1
    for start, settle in zip(starts, settles, strict=True):
        turn_id = _turn_of(events[start])
        inside = events[start : settle + 1]
        assert all(_turn_of(e) == turn_id for e in inside)  # nothing of another turn
        kinds = [type(e) for e in inside]
        assert kinds.index(UserMessageRecorded) < kinds.index(MessageChunk)
        assert kinds.index(TurnEnded) < kinds.index(TurnSettled)


async def test_the_user_message_is_told_with_its_journaled_id_before_the_ticket_hears_it() -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        told: list[str | None] = []

        async def sink(event: AgentEvent) -> None:
            if isinstance(event, UserMessageRecorded):
                told.append(event.message_id)
                assert ticket.message_id is None  # the ticket has not heard it yet

        agent.subscribe(sink)
        ticket = agent.followup(text("hello"))
        message_id = await ticket.inserted()
        await ticket.wait()
    recorded = [r for r in agent.session.records if isinstance(r, rec.UserMessage)]
    assert told == [message_id] == [recorded[0].message_id]
    assert recorded[0].content == text("hello")


async def test_settled_comes_after_the_flush_and_before_the_ticket_resolves() -> None:
    order: list[str] = []

    async def flush() -> None:
        order.append("flush")

    async with running_agent(FakeModel([say("x")]), flush=flush) as handle:
        agent = handle.agent

        async def sink(event: AgentEvent) -> None:
            if isinstance(event, TurnSettled):
                order.append(f"settled:{ticket.state}")

        agent.subscribe(sink)
        ticket = agent.followup(text("hi"))
        await ticket.wait()
    assert order == ["flush", "settled:running"]


async def test_settled_carries_the_result_usage_and_window() -> None:
    usage = Usage(input_tokens=10, output_tokens=5)
    async with running_agent(FakeModel([say("x"), usage])) as handle:
        agent = handle.agent
        settled: list[TurnSettled] = []

        async def sink(event: AgentEvent) -> None:
            if isinstance(event, TurnSettled):
                settled.append(event)

        agent.subscribe(sink)
        await agent.followup(text("hi")).wait()
        window = agent.context_budget.window
    [event] = settled
    assert event.result == rec.Completed()
    assert event.last_usage == usage and event.usage == usage
    assert event.window == window and event.not_saved is None


async def test_a_prompt_blocked_at_submission_is_settled_and_never_inserted() -> None:
    seams = Seams()

    async def refuse(submission: PromptSubmission, signal: TurnSignal) -> Block | None:
        return Block("not today")

    seams.prompt_submit.append(refuse)
    async with running_agent(FakeModel(), seams=seams) as handle:
        agent = handle.agent
        events: list[AgentEvent] = []

        async def sink(event: AgentEvent) -> None:
            events.append(event)

        agent.subscribe(sink)
        ticket = agent.followup(text("hi"))
        assert await ticket.inserted() is None
        assert await ticket.wait() == Blocked("not today")
    assert [type(e) for e in events] == [TurnStarting, TurnSettled]
    assert isinstance(events[1], TurnSettled) and events[1].result == Blocked("not today")


async def test_a_dropped_follow_up_never_starts_and_is_never_inserted() -> None:
    model, entered, release = gated_model()
    async with running_agent(model) as handle:
        agent = handle.agent
        events: list[AgentEvent] = []

        async def sink(event: AgentEvent) -> None:
            events.append(event)

        agent.subscribe(sink)
        running = agent.followup(text("first"))
        await entered.wait()
        queued = agent.followup(text("second"))
        agent.cancel()
        assert await queued.inserted() is None
        assert await queued.wait() == Dropped()
        release.set()
        assert await running.wait() == rec.Aborted()
    assert [type(e) for e in events].count(TurnStarting) == 1
    assert [type(e) for e in events].count(TurnSettled) == 1
    assert isinstance(events[-1], TurnSettled) and events[-1].result == rec.Aborted()


async def test_a_cancelled_turn_settles_after_its_last_event() -> None:
    model, entered, release = gated_model()
    async with running_agent(model) as handle:
        agent = handle.agent
        events: list[AgentEvent] = []

        async def sink(event: AgentEvent) -> None:
            events.append(event)

        agent.subscribe(sink)
        ticket = agent.followup(text("stop me"))
        await entered.wait()
        agent.cancel()
        release.set()
        assert await ticket.wait() == rec.Aborted()
    assert isinstance(events[-1], TurnSettled)
    assert isinstance(events[-2], TurnEnded) and events[-2].outcome == rec.Aborted()
