"""The prompt response's `usage` (the turn's tokens summed over its model requests), through the
real process with raw frames: end_turn, max_tokens and cancelled turns.

The scripted model counts words as tokens: a request's input is the words it sends, its output
the words of its events (tests/support/scripted_model.py, acp_server/models/script.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_protocol.usage import PromptResponse, Usage
from tests.support.raw_client import new_session, raw_agent, text
from tests.support.scripted_model import script

pytestmark = pytest.mark.anyio


def usage_of(response: dict[str, Any]) -> dict[str, Any]:
    usage: dict[str, Any] = response["result"]["usage"]
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    return usage


async def test_end_turn_sums_every_request_of_the_turn(tmp_path: Path) -> None:
    one_step = script(tmp_path, [{"text": "four words of text"}], name="one")
    two_steps = script(
        tmp_path,
        [{"tool_call": {"name": "list_dir", "arguments": {}}}],
        [{"text": "four words of text"}],
        name="two",
    )
    async with raw_agent("--model", one_step) as client:
        sid = await new_session(client, str(tmp_path))
        single = await client.request("session/prompt", {"sessionId": sid, "prompt": text("hi")})
    async with raw_agent("--model", two_steps) as client:
        sid = await new_session(client, str(tmp_path))
        double = await client.request("session/prompt", {"sessionId": sid, "prompt": text("hi")})
    assert single["result"]["stopReason"] == double["result"]["stopReason"] == "end_turn"
    alone, summed = usage_of(single), usage_of(double)
    assert alone["outputTokens"] == 4
    assert alone["cachedReadTokens"] == alone["cachedWriteTokens"] == 0
    # Two requests: the second resends the first's input, so the sum holds more than twice it.
    assert summed["inputTokens"] > 2 * alone["inputTokens"]
    assert summed["outputTokens"] > alone["outputTokens"]


async def test_max_tokens_turn_reports_its_usage(tmp_path: Path) -> None:
    spec = script(tmp_path, [{"text": "cut off here"}, {"finish": "max_tokens"}])
    async with raw_agent("--model", spec) as client:
        sid = await new_session(client, str(tmp_path))
        response = await client.request("session/prompt", {"sessionId": sid, "prompt": text("x")})
    assert response["result"]["stopReason"] == "max_tokens"
    assert usage_of(response)["outputTokens"] == 3


async def test_cancelled_turn_reports_the_requests_that_finished(tmp_path: Path) -> None:
    spec = script(
        tmp_path,
        [{"tool_call": {"name": "list_dir", "arguments": {}}}],
        [{"text": "started"}, {"delay_ms": 60_000}, {"text": "never"}],
    )
    async with raw_agent("--model", spec) as client:
        sid = await new_session(client, str(tmp_path))
        prompt = await client.start("session/prompt", {"sessionId": sid, "prompt": text("go")})
        await client.wait_for(
            lambda f: (
                f.get("method") == "session/update"
                and f["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
            )
        )
        await client.notify("session/cancel", {"sessionId": sid})
        response = await client.response(prompt)
    assert response["result"]["stopReason"] == "cancelled"
    usage = usage_of(response)
    # The first request (the tool call) finished and counts; the cut one reported nothing.
    assert usage["inputTokens"] > 0
    assert usage["outputTokens"] >= 0


async def test_a_turn_without_any_model_request_has_no_usage(tmp_path: Path) -> None:
    async with raw_agent("--model", "echo") as client:
        sid = await new_session(client, str(tmp_path))
        response = await client.request(
            "session/prompt", {"sessionId": sid, "prompt": text("/mode read_only")}
        )
    assert response["result"] == {"stopReason": "end_turn"}


def test_usage_round_trips_the_rfd_example() -> None:
    # From agentclientprotocol.com/rfds/end-turn-token-usage (the v1 carrier: PromptResponse).
    example = (
        b'{"stopReason":"end_turn","usage":{"totalTokens":53000,"inputTokens":35000,'
        b'"outputTokens":12000,"thoughtTokens":5000,"cachedReadTokens":5000,'
        b'"cachedWriteTokens":1000}}'
    )
    decoded = msgspec.json.decode(example, type=PromptResponse)
    assert isinstance(decoded.usage, Usage) and decoded.usage.thought_tokens == 5000
    assert msgspec.json.encode(decoded) == example
    bare = msgspec.json.decode(b'{"stopReason":"cancelled"}', type=PromptResponse)
    assert msgspec.json.encode(bare) == b'{"stopReason":"cancelled"}'
