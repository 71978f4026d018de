"""The prompt methods (acp_server/acp/methods/prompts.py) in process: a local command's answer
gets a message id of the connection's id source, unique in the session. The rest is tested in
tests/e2e/test_prompt.py, tests/acp/test_cancel_cause.py (the cause each stop passes) and
tests/acp/test_update_order.py (every update before the answer)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_server.session import records as rec
from tests.support.agent_harness import FakeModel
from tests.support.bridge import in_process_bridge

pytestmark = pytest.mark.anyio


@pytest.fixture
def frozen_clock() -> Iterator[None]:
    """Every timestamp the same millisecond: what two commands answered in a row can see."""
    rec.set_clock(lambda: 1_700_000_000_123)
    try:
        yield
    finally:
        rec.set_clock(None)


@pytest.mark.usefixtures("frozen_clock")
async def test_command_answers_in_the_same_millisecond_get_distinct_message_ids(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    async with in_process_bridge(FakeModel(), tmp_path / "data") as bridge:
        sid = await bridge.new_session(ws)
        for command in ("/mode", "/mode read_only", "/model"):
            prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": command}]}
            assert (await bridge.call("session/prompt", prompt))["stopReason"] == "end_turn"
        said = [
            f["params"]["update"]
            for f in bridge.frames
            if f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
    assert len(said) == 3
    ids = [u["messageId"] for u in said]
    assert len(set(ids)) == 3, ids
