"""A v2 session's background commands (acp_server/acp/v2/background.py), in process with real
processes: each item's terminal is announced before the snapshot that lists it, its output
reaches its terminal (escaped), its exit comes before the snapshot that drops it; once the list
is reported every state update carries it; a close's final idle is `cancelled` with an empty
list. Every frame is valid v2. The same through the real process: tests/e2e/test_background_v2.py.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.acp.v2.view import V2SessionView
from acp_server.agent import TurnStarting
from acp_server.process.background import BackgroundItems
from acp_server.session import records as rec
from tests.acp.v2.test_view import TURN, RecordingPeer, presented, settled

pytestmark = pytest.mark.anyio

DEADLINE = 20.0


@asynccontextmanager
async def shown(
    tmp_path: Path,
) -> AsyncIterator[tuple[V2SessionView, RecordingPeer, BackgroundItems]]:
    with anyio.fail_after(DEADLINE):
        async with presented(tmp_path) as (view, peer, _), anyio.create_task_group() as tg:
            items = BackgroundItems(tg, None)
            view.show_background(items)
            try:
                yield view, peer, items
            finally:
                await items.aclose()


def decoded(update: dict[str, Any]) -> str:
    return base64.b64decode(update["output"]["data"]).decode()


async def test_an_item_is_announced_listed_shown_exited_then_dropped(tmp_path: Path) -> None:
    async with shown(tmp_path) as (_, peer, items):
        item = await items.start(
            ["bash", "-c", "printf 'one\\033[2J\\n'; sleep 300"],
            command="serve",
            call_id="call_1",
            cwd=str(tmp_path),
        )
        with anyio.fail_after(DEADLINE):
            while not any("output" in u for u in peer.updates()):  # noqa: ASYNC110
                await anyio.sleep(0.02)
        await items.stop(item)
    updates = peer.updates()
    assert updates[0] == {
        "sessionUpdate": "terminal_update",
        "terminalId": "bg_1",
        "command": "serve",
        "cwd": str(tmp_path),
        "capabilities": {"cancel": {}},
    }
    assert updates[1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "background": [{"type": "terminal", "terminalId": "bg_1"}],
    }
    output = next(u for u in updates if "output" in u and "exitStatus" not in u)
    assert decoded(output) == "one\\x1b[2J\n"  # a command must not drive the user's terminal
    exit_at = next(i for i, u in enumerate(updates) if "exitStatus" in u)
    assert updates[exit_at]["exitStatus"] == {"signal": "SIGTERM"}
    assert updates[exit_at]["capabilities"] is None
    assert updates[exit_at + 1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "background": [],
    }
    assert exit_at + 1 == len(updates) - 1


async def test_once_reported_every_state_update_carries_the_list(tmp_path: Path) -> None:
    async with shown(tmp_path) as (view, peer, items):
        await view(TurnStarting(TURN))
        assert "background" not in peer.updates()[-1]  # not reported before the first item
        item = await items.start(["sleep", "300"], command="sleep 300", call_id=None, cwd="/")
        await view(settled(rec.Completed()))
        await view(TurnStarting("turn_2"))
        await view.foreground.closed_background()
        await items.stop(item)
    for update in [u for u in peer.updates() if u["sessionUpdate"] == "state_update"][1:]:
        assert "background" in update
    assert peer.states()[:4] == ["running", "running", "idle:end_turn", "running"]
    assert {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
        "background": [],
    } in peer.updates()
