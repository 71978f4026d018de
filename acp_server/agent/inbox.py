"""Pending input of one agent: queued follow-ups, staged steering, staged context.

Every queue operation costs O(1) per follow-up, however long the queue: withdrawing a ticket
settles it where it stands and `claim` skips settled tickets, rather than searching the queue
for it (10,000 queued prompts each withdrawn by `$/cancel_request` were quadratic).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

import anyio

from acp_server.models.base import Usage
from acp_server.session.records import Outcome, Part


@dataclass(frozen=True)
class Dropped:
    """The follow-up was cleared from the queue (cancel or dispose) before its turn began."""


@dataclass(frozen=True)
class Blocked:
    """A prompt-submission listener refused the follow-up; no turn was opened."""

    reason: str


TicketResult = Outcome | Dropped | Blocked


class PromptTicket:
    """A follow-up's claim check: resolves with the result of its own turn."""

    def __init__(self, content: list[Part]) -> None:
        self.content = content
        self.state: Literal["queued", "running", "done"] = "queued"
        self.result: TicketResult | None = None
        self.error_detail: str | None = None
        """For an `error` result: the full (redacted) text the durable outcome leaves out."""
        self.not_saved: Exception | None = None
        """Why the turn's records may not be durable (its durability flush failed), if so."""
        self.usage: Usage | None = None
        """The turn's token usage (summed over its model requests), when any was reported."""
        self.message_id: str | None = None
        """The user message the prompt became, once recorded (`inserted`)."""
        self._done = anyio.Event()
        self._placed = anyio.Event()
        self._inbox: Inbox | None = None

    def withdraw(self) -> bool:
        """Retract this follow-up if its turn has not begun; True if it was still queued.

        Not a stop verb: it removes input nobody has acted on. Stopping a running turn is
        `Agent.cancel` (with `keep_inbox=True` to stop only that turn).
        """
        if self.state != "queued" or self._inbox is None:
            return False
        self._inbox.forget(self)
        self.resolve(Dropped())
        return True

    def insert(self, message_id: str) -> None:
        """The prompt was recorded as the user message `message_id`."""
        self.message_id = message_id
        self._placed.set()

    async def inserted(self) -> str | None:
        """The id of the user message the prompt became, once it is recorded; None when the
        ticket settled without one (dropped, withdrawn, blocked, or a `/compact`)."""
        await self._placed.wait()
        return self.message_id

    async def wait(self) -> TicketResult:
        """The result of this follow-up's turn."""
        await self._done.wait()
        assert self.result is not None
        return self.result

    def resolve(self, result: TicketResult) -> None:
        """Settle the ticket (first result wins)."""
        if self.result is None:
            self.result = result
            self.state = "done"
            self._done.set()
            self._placed.set()


class CompactTicket(PromptTicket):
    """A `/compact` request: queued like a follow-up, its turn compacts instead of prompting."""

    def __init__(self, instructions: str | None) -> None:
        super().__init__([])
        self.instructions = instructions


class Inbox:
    """Queued follow-ups (one turn each) and input staged for the next step."""

    def __init__(self) -> None:
        # Tickets in arrival order; withdrawn ones stay until `claim` or `drop_pending` reaches
        # them (they are already settled, so both skip them).
        self._followups: deque[PromptTicket] = deque()
        self._queued = 0
        self.steering: list[list[Part]] = []
        self.context: list[list[Part]] = []

    @property
    def queued(self) -> int:
        """How many follow-ups wait to be claimed (withdrawn ones not counted)."""
        return self._queued

    def enqueue(self, ticket: PromptTicket) -> None:
        """Queue a follow-up behind the others."""
        ticket._inbox = self
        self._followups.append(ticket)
        self._queued += 1

    def forget(self, ticket: PromptTicket) -> None:
        """A queued ticket was withdrawn: stop counting it (it stays in place, settled)."""
        ticket._inbox = None
        self._queued -= 1

    def claim(self) -> PromptTicket | None:
        """The next follow-up to run, removed from the queue."""
        while self._followups:
            ticket = self._followups.popleft()
            if ticket.state == "queued":
                ticket._inbox = None
                self._queued -= 1
                return ticket
        return None

    def drop_pending(self) -> None:
        """Clear queued follow-ups and staged steering (what a broad cancel discards)."""
        while self._followups:
            ticket = self._followups.popleft()
            if ticket.state == "queued":
                ticket._inbox = None
                ticket.resolve(Dropped())
        self._queued = 0
        self.steering.clear()

    def take_staged(self) -> tuple[list[list[Part]], list[list[Part]]]:
        """Remove and return (steering, context) staged for the next step."""
        steering, self.steering = self.steering, []
        context, self.context = self.context, []
        return steering, context
