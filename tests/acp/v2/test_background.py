"""A v2 session's background commands (acp_server/acp/v2/background.py), in process with real
processes: each item's terminal is announced before the snapshot that lists it, its output
reaches its terminal (escaped), its exit comes before the snapshot that drops it; once the list
is reported every state update carries it; a close's final idle is `cancelled` with an empty
list. Every frame is valid v2. The same through the real process: tests/e2e/test_background_v2.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from acp_protocol.jsonrpc import JSONRPC_VERSION, OutgoingNotification
from acp_server.acp.context import BridgeContext
from acp_server.acp.options import ServerOptions
from acp_server.acp.v2.presenter import V2Presenter
from acp_server.acp.v2.view import V2SessionView
from acp_server.agent import TurnSettled, TurnStarting
from acp_server.process import ProcessRegistry
from acp_server.process.background import BackgroundItems
from acp_server.session import records as rec
from tests.support.wire_v2 import validate_agent_frame_v2

pytestmark = pytest.mark.anyio

DEADLINE = 20.0
TURN = "turn_1"


class RecordingPeer:
    """The peer's notifications, recorded as the frames they would write."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    async def notify(self, method: str, params: Any) -> None:
        frame = OutgoingNotification(JSONRPC_VERSION, method, params)
        self.frames.append(json.loads(msgspec.json.encode(frame)))

    def updates(self) -> list[dict[str, Any]]:
        return [f["params"]["update"] for f in self.frames if f.get("method") == "session/update"]

    def states(self) -> list[str]:
        return [
            u["state"] + (f":{u['stopReason']}" if "stopReason" in u else "")
            for u in self.updates()
            if u["sessionUpdate"] == "state_update"
        ]


def settled(result: Any) -> TurnSettled:
    return TurnSettled(TURN, result, None, None, None, None, 1000)


@asynccontextmanager
async def shown(
    tmp_path: Path,
) -> AsyncIterator[tuple[V2SessionView, RecordingPeer, BackgroundItems]]:
    peer = RecordingPeer()
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            context = BridgeContext(
                peer,  # type: ignore[arg-type]
                tg,
                ServerOptions(data_dir=tmp_path),
                ProcessRegistry(),
            )
            presenter = V2Presenter(context)
            context.presenter = presenter
            view = presenter.session_view("sess_1", str(tmp_path), [])
            assert isinstance(view, V2SessionView)
            items = BackgroundItems(tg, None)
            view.show_background(items)
            try:
                yield view, peer, items
            finally:
                await items.aclose()
    for frame in peer.frames:
        validate_agent_frame_v2(frame)


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
