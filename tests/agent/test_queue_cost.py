"""The cost of a queued prompt does not grow with the queue or the history, shown without a
clock: by counting the work each operation does.

- withdrawing a queued follow-up compares it with no other ticket;
- each record is turned into model input once, not once per later request;
- closing a turn looks only at that turn's records;
- the scripted model counts the words of each message once per session.

Timings are in docs/benchmarks.md (`scripts/bench queue`).
"""

from __future__ import annotations

from typing import Any

import pytest

from acp_server.agent import conversation
from acp_server.agent.inbox import Dropped, Inbox, PromptTicket
from acp_server.models import script
from acp_server.models.script import echo_provider
from acp_server.session import log as session_log
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from tests.agent.harness import FakeModel, running_agent, text

pytestmark = pytest.mark.anyio

MANY = 10_000


class ComparedTicket(PromptTicket):
    """A ticket that counts how often it is compared with another (a queue search does)."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        ComparedTicket.comparisons += 1
        return self is other

    __hash__ = PromptTicket.__hash__


async def test_withdrawing_queued_followups_never_searches_the_queue() -> None:
    inbox = Inbox()
    tickets = [ComparedTicket(text(f"p{n}")) for n in range(MANY)]
    for ticket in tickets:
        inbox.enqueue(ticket)
    ComparedTicket.comparisons = 0
    for ticket in reversed(tickets[1:]):  # the worst order for a search from the front
        assert ticket.withdraw() is True
    assert ComparedTicket.comparisons == 0
    assert inbox.queued == 1
    assert inbox.claim() is tickets[0]
    assert inbox.claim() is None and inbox.queued == 0
    assert all(t.result == Dropped() for t in tickets[1:])


async def test_drop_pending_settles_only_what_is_still_queued() -> None:
    inbox = Inbox()
    tickets = [PromptTicket(text(f"p{n}")) for n in range(5)]
    for ticket in tickets:
        inbox.enqueue(ticket)
    assert tickets[2].withdraw() is True
    inbox.drop_pending()
    assert inbox.queued == 0 and inbox.claim() is None
    assert all(t.result == Dropped() and t.state == "done" for t in tickets)


async def test_each_record_becomes_model_input_once_however_many_turns_follow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    converted: list[rec.Record] = []
    item_for = conversation._item_for

    def counting(record: rec.Record) -> Any:
        converted.append(record)
        return item_for(record)

    monkeypatch.setattr(conversation, "_item_for", counting)
    model = FakeModel()
    turns = 200
    async with running_agent(model) as handle:
        agent = handle.agent
        tickets = [agent.followup(text(f"p{n}")) for n in range(turns)]
        for ticket in tickets:
            assert await ticket.wait() == rec.Completed()
        records = list(agent.session.records)
    assert len(converted) == len(records)  # every record once, none twice
    last = model.requests[-1].messages
    assert len(last) == 2 * turns - 1  # every earlier prompt and answer, plus this prompt
    assert last[-1].parts[0].text == f"p{turns - 1}"  # type: ignore[union-attr]


async def test_closing_a_turn_looks_only_at_that_turns_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    history: list[rec.Record] = []
    for n in range(MANY):
        turn = f"turn_{n}"
        history += [
            rec.TurnStart(turn_id=turn, at="t"),
            rec.UserMessage(
                turn_id=turn,
                message_id=f"m{n}",
                content=[rec.TextPart(text="x")],
                origin="prompt",
                at="t",
            ),
            rec.TurnEnd(turn_id=turn, outcome=rec.Completed(), at="t"),
        ]
    log = SessionLog("s", history)
    log.append(rec.TurnStart(turn_id="now", at="t"))
    call = rec.ToolCallRecord(call_id="c1", name="probe", arguments={})
    log.append(
        rec.AssistantMessage(turn_id="now", message_id="a", parts=[], tool_calls=[call], at="t")
    )
    visited = 0
    turn_of = session_log._turn_of

    def counting(record: rec.Record) -> str | None:
        nonlocal visited
        visited += 1
        return turn_of(record)

    monkeypatch.setattr(session_log, "_turn_of", counting)
    assert log.open_tool_calls("now") == [call]
    assert visited == 2


async def test_the_scripted_model_counts_each_message_once_per_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = 0
    item_words = script._item_words

    def counting(item: Any) -> int:
        nonlocal counted
        counted += 1
        return item_words(item)

    monkeypatch.setattr(script, "_item_words", counting)
    model = echo_provider()
    turns = 200
    async with running_agent(model) as handle:  # type: ignore[arg-type]
        agent = handle.agent
        for n in range(turns):
            assert await agent.followup(text(f"word {n}")).wait() == rec.Completed()
        requests = len([r for r in agent.session.records if isinstance(r, rec.StepStart)])
    messages = 2 * turns - 1  # what the last request carried
    assert requests == turns and counted == messages
