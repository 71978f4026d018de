"""How a turn's result reads as an ACP stop reason: one table for the answer to a prompt
(acp/methods/prompts.py) and for a child session's `idle` state (acp/child_sessions.py)."""

from __future__ import annotations

from acp_protocol.session import StopReason
from acp_server.agent import Blocked, Dropped, TicketResult
from acp_server.session import records as rec


def stop_reason(result: TicketResult | rec.Outcome) -> StopReason | None:
    """The stop reason of a turn's result; None for an error outcome, which each reader tells
    its own way (a prompt answers a JSON-RPC error; a child's call result carries it).

    A turn that was cancelled, disposed, interrupted or dropped reads `cancelled`: never an error
    and never `end_turn`, even if the cancellation made something underneath fail.
    """
    if isinstance(result, rec.Completed):
        return "end_turn"
    if isinstance(result, rec.MaxTokens):
        return "max_tokens"
    if isinstance(result, rec.MaxTurnRequests):
        return "max_turn_requests"
    if isinstance(result, (rec.Refusal, Blocked)):
        return "refusal"
    if isinstance(result, (rec.Aborted, rec.DisposedOutcome, rec.InterruptedOutcome, Dropped)):
        return "cancelled"
    assert isinstance(result, rec.ErrorOutcome)
    return None
