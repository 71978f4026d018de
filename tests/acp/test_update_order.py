"""Every update of a turn is written before that turn's prompt response (ACP: clients treat the
response as the end of the turn), seen on the bridge's stdout in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.models.base import Usage
from tests.support.agent_harness import FakeModel, finish, say, wait_for_abort
from tests.support.bridge import Bridge, in_process_bridge

pytestmark = pytest.mark.anyio


def _written(bridge: Bridge) -> list[dict[str, Any]]:
    return [frame for kind, frame in bridge.events if kind == "write"]


def _after_response(bridge: Bridge, request_id: int) -> list[dict[str, Any]]:
    frames = _written(bridge)
    (index,) = [i for i, f in enumerate(frames) if f.get("id") == request_id and "method" not in f]
    return frames[index + 1 :]


async def test_chunks_and_the_usage_update_precede_the_response(tmp_path: Path) -> None:
    usage = Usage(input_tokens=12, output_tokens=3)
    model = FakeModel([say("a"), say("b"), usage, finish()])
    async with in_process_bridge(model, tmp_path / "data") as bridge:
        session_id = await bridge.new_session(tmp_path)
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        request_id = await bridge.send_request("session/prompt", prompt)
        result = (await bridge.response(request_id))["result"]
        assert result["stopReason"] == "end_turn"
        assert result["usage"]["inputTokens"] == 12 and result["usage"]["outputTokens"] == 3
        # A request after the prompt: whatever the turn still owed would be written by now.
        await bridge.call("session/list", {})
        shown = [
            f["params"]["update"]["sessionUpdate"]
            for f in _written(bridge)
            if f.get("method") == "session/update"
        ]
        late = _after_response(bridge, request_id)
    assert shown.count("agent_message_chunk") == 2 and "usage_update" in shown
    assert [f for f in late if f.get("method") == "session/update"] == []


async def test_a_cancelled_turn_writes_nothing_after_its_response(tmp_path: Path) -> None:
    entered = anyio.Event()
    model = FakeModel([say("working"), wait_for_abort(entered)])
    async with in_process_bridge(model, tmp_path / "data") as bridge:
        session_id = await bridge.new_session(tmp_path)
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        request_id = await bridge.send_request("session/prompt", prompt)
        await entered.wait()
        await bridge.notify("session/cancel", {"sessionId": session_id})
        assert (await bridge.response(request_id))["result"] == {"stopReason": "cancelled"}
        await bridge.call("session/list", {})
        late = _after_response(bridge, request_id)
    assert [f for f in late if f.get("method") == "session/update"] == []
