"""Closing one turn: its outcome, the not-run balance, `turn/end`, the durability flush and the
ticket, in that order, whatever way the turn ended (shielded by the loop).

The agent loop (`acp_server/agent/loop.py`) runs the turn and hands what it left here: whether
it was opened, the outcome it reached (if any), whether the owner's scope tore it down. The
order of the steps below is the contract; each race comment stays beside its step. See
docs/rfc/implemented/architecture/2026-11-30-explicit-turn-cancellation.md.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from acp_server.cancellation import Disposed, TurnCancellation, TurnSignal
from acp_server.ids import IdFactory
from acp_server.models.base import Usage
from acp_server.session import records as rec
from acp_server.session.log import SessionLog

from .events import AgentEvent, TurnEnded, TurnSettled
from .inbox import CompactTicket, Inbox, PromptTicket, TicketResult
from .tool_calls import ToolCalls

log = logging.getLogger(__name__)

__all__ = ["TurnCloser", "TurnOwner"]


class TurnOwner(Protocol):
    """What the closer reads and clears of the loop that ran the turn."""

    disposing: bool
    holder: TurnCancellation | None
    turn_usage: Usage | None
    last_usage: Usage | None

    @property
    def window(self) -> int:
        """The context window the turn's usage is measured against."""


class TurnCloser:
    """Closes the turns of one agent loop."""

    def __init__(
        self,
        loop: TurnOwner,
        session: SessionLog,
        inbox: Inbox,
        calls: ToolCalls,
        emit: Callable[[AgentEvent], Awaitable[None]],
        ids: IdFactory,
        durability_flush: Callable[[], Awaitable[None]] | None,
    ) -> None:
        self._loop = loop
        self.session = session
        self.inbox = inbox
        self._calls = calls
        self._emit = emit
        self._ids = ids
        self._durability_flush = durability_flush

    async def close(
        self,
        ticket: PromptTicket,
        signal: TurnSignal,
        turn_id: str,
        opened: bool,
        outcome: rec.Outcome | None,
        hard_cancel: bool,
    ) -> None:
        if ticket.result is not None:  # blocked at submission: no turn was opened
            await self._settled(ticket, turn_id, ticket.result)
            return
        # Lifecycle first: disposal wins even over an earlier user cancel (which then owns the
        # signal's reason, so the reason alone cannot tell).
        if hard_cancel or (
            signal.aborted and (self._loop.disposing or isinstance(signal.reason, Disposed))
        ):
            outcome = rec.DisposedOutcome()
        elif signal.aborted:
            outcome = rec.Aborted()
        elif outcome is None:
            outcome = rec.ErrorOutcome(message="the turn ended without an outcome")
        # Steering left staged belongs to a step this turn will never take: it is discarded,
        # never recorded or re-queued, keep_inbox or not (see
        # docs/rfc/implemented/architecture/2026-12-01-cancel-edges.md).
        self.inbox.steering.clear()
        if opened:
            await self._calls.close_unstarted(turn_id)
            _, context = self.inbox.take_staged()
            for extra in context:
                self.session.recorder.user_message(self._ids("msg"), extra, "context", turn_id)
        # Cleared right before turn/end: its observers and the durability flush below cannot
        # cancel work that has already finished.
        self._loop.holder = None
        if opened:
            self.session.recorder.turn_ended(turn_id, outcome)
            await self._emit(TurnEnded(turn_id, outcome))
        flush = self._durability_flush
        if flush is not None and (opened or isinstance(ticket, CompactTicket)):
            try:
                await flush()
            except Exception as exc:
                # The outcome is already recorded; a failing store must not strand the
                # ticket or tear down the task group the agent runs in. The ticket says
                # the turn is not durable, so whoever answers for it can say so.
                log.warning("turn %s is not saved: %s", turn_id, exc)
                ticket.not_saved = exc
        ticket.usage = self._loop.turn_usage
        # The turn's last event, after the flush: observers may treat it as "done and durable",
        # and the loop claims the next ticket only once they have heard it.
        await self._settled(ticket, turn_id, outcome)
        ticket.resolve(outcome)

    async def _settled(self, ticket: PromptTicket, turn_id: str, result: TicketResult) -> None:
        loop = self._loop
        await self._emit(
            TurnSettled(
                turn_id,
                result,
                ticket.error_detail,
                ticket.not_saved,
                loop.turn_usage,
                loop.last_usage,
                loop.window,
            )
        )
