"""Pending input of one agent: queued follow-ups, staged steering, staged context."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

import anyio

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
        self._done = anyio.Event()
        self._queue: deque[PromptTicket] | None = None

    def withdraw(self) -> bool:
        """Retract this follow-up if its turn has not begun; True if it was still queued.

        Not a stop verb: it removes input nobody has acted on. Stopping a running turn is
        `Agent.cancel` (with `keep_inbox=True` to stop only that turn).
        """
        if self.state != "queued" or self._queue is None:
            return False
        try:
            self._queue.remove(self)
        except ValueError:
            return False
        self.resolve(Dropped())
        return True

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


class CompactTicket(PromptTicket):
    """A `/compact` request: queued like a follow-up, its turn compacts instead of prompting."""

    def __init__(self, instructions: str | None) -> None:
        super().__init__([])
        self.instructions = instructions


class Inbox:
    """Queued follow-ups (one turn each) and input staged for the next step."""

    def __init__(self) -> None:
        self.followups: deque[PromptTicket] = deque()
        self.steering: list[list[Part]] = []
        self.context: list[list[Part]] = []

    def enqueue(self, ticket: PromptTicket) -> None:
        """Queue a follow-up behind the others."""
        ticket._queue = self.followups
        self.followups.append(ticket)

    def claim(self) -> PromptTicket | None:
        """The next follow-up to run, removed from the queue."""
        return self.followups.popleft() if self.followups else None

    def drop_pending(self) -> None:
        """Clear queued follow-ups and staged steering (what a broad cancel discards)."""
        while self.followups:
            self.followups.popleft().resolve(Dropped())
        self.steering.clear()

    def take_staged(self) -> tuple[list[list[Part]], list[list[Part]]]:
        """Remove and return (steering, context) staged for the next step."""
        steering, self.steering = self.steering, []
        context, self.context = self.context, []
        return steering, context
