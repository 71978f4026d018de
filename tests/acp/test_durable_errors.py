"""A failed turn's durable error is coarse; the provider's text reaches only the client's error
and the log, with secrets masked (by acp_server/redaction.py, tested on its own elsewhere).

The bridge runs in process so the test can read the journal and the log beside the wire.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from acp_server.agent.failures import MODEL_FAILED
from acp_server.cancellation import TurnSignal
from acp_server.models.base import ModelError, ModelRequest
from tests.support.agent_harness import FakeModel, say
from tests.support.bridge import in_process_bridge

pytestmark = pytest.mark.anyio

KEY = "sk-test-0123456789abcdef"
BODY = f'{{"error": {{"message": "upstream exploded near {KEY}", "internal": "node-7"}}}}'


def failing_model(message: str, code: str | None) -> FakeModel:
    async def fail(request: ModelRequest, signal: TurnSignal) -> object:
        raise ModelError(message, code=code)

    return FakeModel([say("partial"), fail])


async def _failed_turn(
    tmp_path: Path, message: str, code: str | None
) -> tuple[dict[str, object], bytes]:
    """Run one prompt against a failing model: (the prompt's JSON-RPC error, the journal)."""
    async with in_process_bridge(failing_model(message, code), tmp_path / "data") as bridge:
        session_id = await bridge.new_session(tmp_path)
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        answer = await bridge.response(await bridge.send_request("session/prompt", prompt))
        journal = bridge.journal_path(session_id)
    assert "error" in answer, answer
    return answer["error"], journal.read_bytes()


def _turn_end(journal: bytes) -> dict[str, object]:
    (end,) = [r for r in map(json.loads, journal.splitlines()) if r.get("type") == "turn/end"]
    return end


async def test_the_journal_keeps_a_coarse_error_and_the_client_gets_the_full_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    message = f"openai: the server failed (HTTP 502). It said: {BODY}"
    with caplog.at_level(logging.WARNING, logger="acp_server.agent.loop"):
        error, journal = await _failed_turn(tmp_path, message, "http_502")

    assert _turn_end(journal)["outcome"] == {
        "kind": "error",
        "message": MODEL_FAILED,
        "code": "http_502",
    }
    assert b"upstream exploded" not in journal and KEY.encode() not in journal

    assert error["data"] == {"code": "http_502"}
    shown = str(error["message"])
    assert "the server failed (HTTP 502)" in shown and "upstream exploded" in shown
    assert KEY not in shown and "[redacted]" in shown

    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "upstream exploded" in logged
    assert KEY not in logged


async def test_a_provider_error_type_that_is_not_one_of_our_codes_is_not_kept(
    tmp_path: Path,
) -> None:
    hostile = "Invalid Request: see https://example.invalid/?q=" + "x" * 200
    _, journal = await _failed_turn(tmp_path, "mid-stream error", hostile)
    assert _turn_end(journal)["outcome"] == {
        "kind": "error",
        "message": MODEL_FAILED,
        "code": "model_error",
    }
