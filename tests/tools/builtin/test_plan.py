"""todo_write (acp_server/tools/builtin/plan.py): the plan it returns, and what it refuses."""

from __future__ import annotations

import pytest

from acp_server.tools.base import PlanItem
from tests.support.tool_workspace import Workspace

pytestmark = pytest.mark.anyio


async def test_todo_write_returns_the_plan(ws: Workspace) -> None:
    output = await ws.run(
        "todo_write",
        entries=[
            {"content": "Read the code", "status": "completed"},
            {"content": "Fix the bug", "priority": "high", "status": "in_progress"},
            {"content": "Run the tests"},
        ],
    )
    assert not output.failed
    assert output.plan == [
        PlanItem("Read the code", "medium", "completed"),
        PlanItem("Fix the bug", "high", "in_progress"),
        PlanItem("Run the tests", "medium", "pending"),
    ]
    assert output.text.splitlines() == [
        "Plan updated: 3 entries (1 completed, 1 in progress, 1 pending)",
        "[x] Read the code",
        "[~] Fix the bug (high priority)",
        "[ ] Run the tests",
    ]
    cleared = await ws.run("todo_write", entries=[])
    assert cleared.plan == [] and cleared.text == "Plan cleared."
    blank = await ws.run("todo_write", entries=[{"content": "ok"}, {"content": "  "}])
    assert blank.failed and "entries[1].content is empty" in blank.text
    assert blank.plan is None
