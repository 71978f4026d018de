"""How a settled turn reads on a v2 idle state: its stop reason, and for a turn that failed or
was not saved the error the v1 prompt would have answered (`stop_reason: error`), redacted by
the error exit. A turn a hook blocked before its prompt was inserted reads `refusal`; a
cancelled, disposed or dropped turn `cancelled`, never `error`."""

from __future__ import annotations

from pathlib import Path

from acp_protocol.jsonrpc import ErrorObject
from acp_protocol.v2.session_update import StopReason
from acp_server.agent import TurnSettled
from acp_server.rpc.error_exit import error_object
from acp_server.rpc.handlers import RpcError

from ..stop_reasons import not_saved_error, stop_reason_for

__all__ = ["idle_of"]


def idle_of(event: TurnSettled, data_dir: Path) -> tuple[StopReason, ErrorObject | None]:
    """The idle state's stop reason and error of a settled turn (in v1's order: a turn that is
    not saved is an error whatever its outcome, as its v1 answer is)."""
    try:
        if event.not_saved is not None:
            raise not_saved_error(event.not_saved, data_dir)
        reason: StopReason = stop_reason_for(event.result, event.error_detail)
    except RpcError as failed:
        return "error", error_object(failed.code, failed.message, failed.data)
    return reason, None
