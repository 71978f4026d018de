"""The cost of a queued prompt does not grow with the queue, shown without a clock: by
counting the work an operation does (withdrawing a queued follow-up compares it with no other
ticket). That a turn's cost does not grow with the history is tests/agent/test_conversation.py.

Timings are in docs/benchmarks.md (`benchmarks queue`).
"""

from __future__ import annotations

import pytest

from acp_server.agent.inbox import Dropped, Inbox, PromptTicket
from tests.support.agent_harness import text

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
