"""How a turn's result reads as an ACP stop reason (acp_server/acp/stop_reasons.py): the one
table for every reader, an error turn answered as a JSON-RPC error with the runtime's full
detail, and a turn that ran but was not saved never answered as a silent `end_turn`."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from msgspec import UNSET

from acp_protocol import errors
from acp_server.acp.stop_reasons import not_saved_error, stop_reason, stop_reason_for
from acp_server.agent import Blocked, Dropped, TicketResult
from acp_server.rpc.handlers import RpcError
from acp_server.session import records as rec

TABLE: list[tuple[TicketResult, str]] = [
    (rec.Completed(), "end_turn"),
    (rec.MaxTokens(), "max_tokens"),
    (rec.MaxTurnRequests(), "max_turn_requests"),
    (rec.Refusal(), "refusal"),
    (Blocked(reason="a hook said no"), "refusal"),
    (rec.Aborted(), "cancelled"),
    (rec.DisposedOutcome(), "cancelled"),
    (rec.InterruptedOutcome(), "cancelled"),
    (Dropped(), "cancelled"),
]


@pytest.mark.parametrize(("result", "reason"), TABLE)
def test_every_result_but_an_error_has_its_stop_reason(result: TicketResult, reason: str) -> None:
    assert stop_reason(result) == reason
    assert stop_reason_for(result) == reason


def test_an_error_has_no_stop_reason_and_answers_an_internal_error_with_the_full_detail() -> None:
    outcome = rec.ErrorOutcome(message="the model provider failed", code="http_502")
    assert stop_reason(outcome) is None
    with pytest.raises(RpcError) as raised:
        stop_reason_for(outcome, "HTTP 502 from the provider: bad gateway")
    assert raised.value.code == errors.INTERNAL_ERROR
    assert raised.value.message == "The turn failed: HTTP 502 from the provider: bad gateway"
    assert raised.value.data == {"code": "http_502"}


def test_an_error_without_detail_or_code_says_the_durable_message() -> None:
    with pytest.raises(RpcError) as raised:
        stop_reason_for(rec.ErrorOutcome(message="the model provider failed"))
    assert raised.value.message == "The turn failed: the model provider failed"
    assert raised.value.data is UNSET


def test_a_turn_not_saved_names_the_data_directory_the_errno_and_the_way_out() -> None:
    cause = OSError(errno.ENOSPC, "No space left on device")
    error = not_saved_error(cause, Path("/data/acp"))
    assert error.code == errors.INTERNAL_ERROR
    assert error.data == {"dataDir": "/data/acp", "errno": "ENOSPC"}
    assert "was not saved to the data directory /data/acp" in error.message
    assert "No space left on device" in error.message
    assert "saves it with the next prompt" in error.message


def test_a_cause_without_an_errno_is_named_without_one() -> None:
    error = not_saved_error(RuntimeError("the journal is closed"), Path("/data/acp"))
    assert error.data == {"dataDir": "/data/acp"}
