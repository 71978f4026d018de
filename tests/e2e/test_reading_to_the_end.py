"""The test harness (`tests/support/agent_process.running_agent`) keeps reading until the agent
closes its output, so a frame the agent sends after its last response is in the frame log.

The agent sends some updates only after a response (a session's notices, its slash commands,
the mode it fell back to: the client must know the session first). A test that left right
after the `session/load` response used to lose those the SDK had not read yet, and failed
now and then. Here a stand-in agent waits before sending its late frame, which made that loss
certain; the harness must still record it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.agent_process import running_agent

pytestmark = pytest.mark.anyio

LATE_AGENT = """
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
    time.sleep(0.5)  # the late frame comes well after the client had its answer
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "late"}}
    note = {"sessionId": "s", "update": update}
    print(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": note}), flush=True)
"""


async def test_a_frame_sent_after_the_last_response_is_still_recorded(tmp_path: Path) -> None:
    agent = tmp_path / "late_agent.py"
    agent.write_text(LATE_AGENT)
    async with running_agent(command=(sys.executable, str(agent))) as (conn, process, frames, _):
        await conn.initialize(protocol_version=1)
    assert process.returncode == 0  # it ended at end of input, after its last frame
    assert [f.get("method") for f in frames.received] == [None, "session/update"]
    assert frames.received[1]["params"]["update"]["content"]["text"] == "late"
