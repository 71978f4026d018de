"""`session/prompt` and `session/cancel`: ACP turns onto the runtime and back."""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from acp_server.agent.inbox import Blocked, Dropped, TicketResult
from acp_server.rpc.dispatch import RpcError
from acp_server.session import records as rec
from protocol import errors
from protocol.session import StopReason

KEEP_INBOX_META = "acp-server"
"""`_meta` namespace of our extensions; `{"acp-server": {"keepInbox": true}}` on session/cancel
aborts the running turn but keeps queued prompts."""


def wants_keep_inbox(meta: Any) -> bool:
    """True when a `session/cancel` carries our keepInbox flag."""
    if not isinstance(meta, dict):
        return False
    ours = meta.get(KEEP_INBOX_META)
    return isinstance(ours, dict) and ours.get("keepInbox") is True


def stop_reason_for(result: TicketResult, error_detail: str | None = None) -> StopReason:
    """The ACP stop reason of a prompt's turn; an error turn raises a JSON-RPC error instead,
    with the full `error_detail` when the runtime has one (the durable outcome is coarse).

    A turn that was cancelled or disposed always answers `cancelled`: never an error and never
    `end_turn`, even if the cancellation made something underneath fail.
    """
    if isinstance(result, rec.Completed):
        return "end_turn"
    if isinstance(result, rec.MaxTokens):
        return "max_tokens"
    if isinstance(result, rec.MaxTurnRequests):
        return "max_turn_requests"
    if isinstance(result, (rec.Refusal, Blocked)):
        return "refusal"
    if isinstance(result, (rec.Aborted, rec.DisposedOutcome, rec.Interrupted, Dropped)):
        return "cancelled"
    assert isinstance(result, rec.ErrorOutcome)
    raise RpcError(
        errors.INTERNAL_ERROR,
        f"The turn failed: {error_detail or result.message}",
        {"code": result.code} if result.code else UNSET,
    )
