"""Plan operations through the real process with raw frames: a client that advertises
`clientCapabilities.plan` gets `plan_update` / `plan_removed`, one that does not gets `plan`
as before, and `session/load` replays to the same end state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.raw_client import RawClient, raw_agent, text
from tests.support.scripted_model import script

pytestmark = pytest.mark.anyio


def todo(*entries: tuple[str, str]) -> dict[str, Any]:
    listed = [{"content": c, "status": s, "priority": "high"} for c, s in entries]
    return {"tool_call": {"name": "todo_write", "arguments": {"entries": listed}}}


STEPS = [
    [todo(("read", "pending"), ("fix", "pending"))],
    [todo(("read", "completed"), ("fix", "in_progress"))],
    [todo()],
    [{"text": "done"}],
]
"""One turn: a plan, its progress, then the plan emptied."""


def plan_updates(client: RawClient, sid: str) -> list[dict[str, Any]]:
    return [
        u
        for u in client.updates(sid)
        if u["sessionUpdate"] in ("plan", "plan_update", "plan_removed")
    ]


def entries(items: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"content": c, "priority": "high", "status": s} for c, s in items]


FIRST = entries([("read", "pending"), ("fix", "pending")])
SECOND = entries([("read", "completed"), ("fix", "in_progress")])


async def run_and_reload(
    tmp_path: Path, capabilities: dict[str, Any], steps: list[list[dict[str, Any]]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the plan updates of a live turn, those of its replay in a new process)."""
    spec = script(tmp_path, *steps)
    args = ["--model", spec, "--data-dir", str(tmp_path / "data")]
    init = {"protocolVersion": 1, "clientCapabilities": capabilities}
    async with raw_agent(*args) as client:
        await client.call("initialize", init)
        sid = (await client.call("session/new", {"cwd": str(tmp_path), "mcpServers": []}))[
            "sessionId"
        ]
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("plan it")})
        live = plan_updates(client, sid)
    async with raw_agent(*args) as client:
        await client.call("initialize", init)
        await client.call(
            "session/load", {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}
        )
        replayed = plan_updates(client, sid)
    return live, replayed


async def test_a_plan_client_gets_plan_update_and_plan_removed(tmp_path: Path) -> None:
    live, replayed = await run_and_reload(tmp_path, {"plan": {}}, STEPS)
    assert live == [
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "todo", "entries": FIRST},
        },
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "todo", "entries": SECOND},
        },
        {"sessionUpdate": "plan_removed", "planId": "todo"},
    ]
    assert replayed == live


async def test_replay_ends_with_the_live_plan(tmp_path: Path) -> None:
    live, replayed = await run_and_reload(tmp_path, {"plan": {}}, [*STEPS[:2], STEPS[3]])
    assert live[-1]["plan"]["entries"] == SECOND
    assert replayed == live


async def test_emptying_a_plan_never_shown_sends_nothing(tmp_path: Path) -> None:
    live, replayed = await run_and_reload(tmp_path, {"plan": {}}, [[todo()], STEPS[3]])
    assert live == replayed == []


async def test_a_client_without_the_capability_gets_plan_as_before(tmp_path: Path) -> None:
    live, replayed = await run_and_reload(tmp_path, {}, STEPS)
    assert live == [
        {"sessionUpdate": "plan", "entries": FIRST},
        {"sessionUpdate": "plan", "entries": SECOND},
        {"sessionUpdate": "plan", "entries": []},
    ]
    assert replayed == live
