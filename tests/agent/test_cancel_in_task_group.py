"""A tool whose own task group re-raises the turn's cancel inside an exception group is a
cancelled call, never a failed tool: the result says "cancelled", the turn ends aborted and
nothing logs a tool failure."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from acp_server.cancellation import TurnSignal
from acp_server.session import records as rec
from acp_server.session.stopped_calls import stopped_calls
from acp_server.tools.base import ToolOutput
from tests.support.agent_harness import (
    FakeModel,
    FakeTool,
    call,
    finish,
    of_type,
    running_agent,
    text,
    turn_ends,
)

pytestmark = pytest.mark.anyio


async def test_an_exception_group_holding_the_cancel_is_a_cancel(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entered = anyio.Event()

    async def behaviour(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        async def child() -> None:
            entered.set()
            await signal.wait()
            signal.raise_if_aborted()

        async with anyio.create_task_group() as tg:  # raises an ExceptionGroup
            tg.start_soon(child)
        return ToolOutput("unreachable")

    tool = FakeTool("bash", behaviour)
    model = FakeModel([call("bash"), finish("tool_calls")])
    caplog.set_level(logging.INFO, logger="acp_server.agent")
    async with running_agent(model, tools=[tool]) as handle:
        ticket = handle.agent.followup(text("run it"))
        await entered.wait()
        handle.agent.cancel()
        await handle.agent.when_idle()
    assert ticket.result == rec.Aborted()
    assert [e.outcome for e in turn_ends(handle.agent.session)] == [rec.Aborted()]
    [result] = of_type(handle.agent.session, rec.ToolResult)
    assert result.output == "cancelled: the turn was aborted"
    # The shape a replay reads back as stopped while running (`cancelled` on v2).
    assert stopped_calls(handle.agent.session.records) == {(result.turn_id, result.call_id)}
    assert not [r for r in caplog.records if "failed" in r.getMessage()]
