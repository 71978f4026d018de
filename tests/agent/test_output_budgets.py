"""The agent loop's last guard on tool results: any tool's result (MCP, subagents) and a
denial's reason are capped before the model sees them, saying what was cut. Each built-in
tool's own cap and the budget itself: tests/tools/test_budget.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from acp_server.agent.seams import Seams
from acp_server.cancellation import TurnSignal
from acp_server.session import records as rec
from acp_server.tools.base import ToolOutput
from acp_server.tools.budget import utf8_size
from acp_server.verdicts import Deny
from tests.support.agent_harness import (
    FakeModel,
    FakeTool,
    call,
    finish,
    of_type,
    running_agent,
    text,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """asyncio only, as where these tests came from (tests/models, tests/tools): the tool and
    provider code under test does not claim trio support; tests/agent's conftest adds trio."""
    return "asyncio"


async def test_the_loop_caps_any_tools_result_before_the_model_sees_it() -> None:
    async def flood(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        return ToolOutput("start " + "y" * 200_000 + " end")

    model = FakeModel([call("flood"), finish("tool_calls")])
    async with running_agent(model, tools=[FakeTool("flood", flood)]) as handle:
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
        [result] = of_type(handle.agent.session, rec.ToolResult)
    assert utf8_size(result.output) <= 64 * 1024  # the default ToolBudget
    assert result.output.startswith("start yyy") and result.output.endswith("yyy end")
    assert "over the 65536-byte limit for tool results" in result.output
    sent = "".join(str(item) for item in model.requests[-1].messages)
    assert "y" * 70_000 not in sent and "over the 65536-byte limit" in sent


async def test_a_denials_reason_is_capped_like_a_result() -> None:
    async def deny_at_length(call: Any, signal: TurnSignal) -> Deny:
        return Deny("because " + "z" * 200_000)  # e.g. a pre_tool hook that says a lot

    model = FakeModel([call("probe"), finish("tool_calls")])
    seams = Seams(approval=[deny_at_length])
    async with running_agent(model, tools=[FakeTool("probe")], seams=seams) as handle:
        assert await handle.agent.followup(text("go")).wait() == rec.Completed()
        [result] = of_type(handle.agent.session, rec.ToolResult)
    assert utf8_size(result.output) <= 64 * 1024
    assert result.output.startswith("denied: because zzz") and result.status == "failed"
