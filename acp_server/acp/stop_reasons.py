"""How a turn's result reads as an ACP stop reason: one table for the answer to a prompt
(acp/methods/prompts.py), a child session's `idle` state (acp/child_sessions.py) and a v2
turn's idle state (acp/v2/settled.py); and the errors of a turn that failed or was not saved,
which v1 answers to the prompt and v2 carries in the idle state."""

from __future__ import annotations

import errno
from pathlib import Path

from msgspec import UNSET

from acp_protocol import errors
from acp_protocol.session import StopReason
from acp_server.agent import Blocked, Dropped, TicketResult
from acp_server.rpc.handlers import RpcError
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


def stop_reason_for(result: TicketResult, error_detail: str | None = None) -> StopReason:
    """The ACP stop reason of a prompt's turn; an error turn raises a JSON-RPC error instead,
    with the full `error_detail` when the runtime has one (the durable outcome is coarse).

    A turn that was cancelled or disposed always answers `cancelled`: never an error and never
    `end_turn`, even if the cancellation made something underneath fail.
    """
    reason = stop_reason(result)
    if reason is not None:
        return reason
    assert isinstance(result, rec.ErrorOutcome)
    raise RpcError(
        errors.INTERNAL_ERROR,
        f"The turn failed: {error_detail or result.message}",
        {"code": result.code} if result.code else UNSET,
    )


def not_saved_error(cause: Exception, data_dir: Path) -> RpcError:
    """The error of a turn that ran but is not on disk: never a silent `end_turn`.

    The session goes on: its records wait in memory and the next turn's flush writes them,
    once the data directory has room again (see `acp_server/session/journal.py`).
    """
    data: dict[str, object] = {"dataDir": str(data_dir)}
    code = getattr(cause, "errno", None)
    if isinstance(code, int) and code in errno.errorcode:
        data["errno"] = errno.errorcode[code]
    return RpcError(
        errors.INTERNAL_ERROR,
        f"The turn ran but was not saved to the data directory {data_dir}: {cause}. Free space"
        " there (or fix the file system); the session keeps the turn and saves it with the"
        " next prompt that can be written.",
        data,
    )
