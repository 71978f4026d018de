"""What the session wiring (acp_server/acp/wiring.py) converts at the edge: the `mcpServers` of
`session/new`, `load` and `resume` become the MCP extension's own config, once, so the
extension never sees a wire type; and how it hooks the session's background commands up: the
status line on every request, the journal, the session's end. The wiring as a whole runs in the
e2e tests (every session)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import msgspec
import pytest

from acp_protocol.mcp import McpServer
from acp_server.acp.wiring import follow_background, mcp_config
from acp_server.agent.status_line import HEADING, status_of
from acp_server.extensions.mcp import McpServerConfig
from acp_server.process.background import BackgroundItems
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.tools.modes import SANDBOX_ENV
from tests.support.agent_harness import FakeModel, call
from tests.support.bridge import Bridge, in_process_bridge


def wire(**fields: object) -> McpServer:
    return msgspec.convert(fields, McpServer)


def test_a_stdio_server_keeps_its_command_arguments_and_environment() -> None:
    server = wire(
        name="files",
        command="/usr/bin/mcp-files",
        args=["--root", "."],
        env=[{"name": "TOKEN", "value": "t"}, {"name": "MODE", "value": "ro"}],
    )
    assert mcp_config(server) == McpServerConfig(
        name="files",
        transport="stdio",
        command="/usr/bin/mcp-files",
        args=("--root", "."),
        env={"TOKEN": "t", "MODE": "ro"},
    )


def test_http_and_sse_servers_keep_their_url_and_headers() -> None:
    for kind in ("http", "sse"):
        server = wire(
            name="web",
            type=kind,
            url="https://mcp.example/x",
            headers=[{"name": "Authorization", "value": "Bearer k"}],
        )
        assert mcp_config(server) == McpServerConfig(
            name="web",
            transport=kind,
            url="https://mcp.example/x",
            headers={"Authorization": "Bearer k"},
        )


def test_a_transport_we_cannot_reach_is_passed_on_by_name() -> None:
    """The extension fails that server with a message naming the transport; the session
    lives on (tests/extensions/test_mcp.py)."""
    server = wire(name="new", type="acp", url="x", headers=[])
    assert mcp_config(server).transport == "acp"


# --- background commands ---------------------------------------------------------------------


async def prompt(bridge: Bridge, session_id: str) -> dict[str, Any]:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    return await bridge.call("session/prompt", params)


def journaled(bridge: Bridge, session_id: str, kind: str) -> list[dict[str, Any]]:
    lines = bridge.journal_path(session_id).read_text().splitlines()[1:]  # after the header
    return [record for record in map(json.loads, lines) if record.get("type") == kind]


@pytest.fixture
def bypass(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`--mode bypass`, allowed as root as in a container (no permission questions here)."""
    monkeypatch.setenv(SANDBOX_ENV, "1")
    return {"mode": "bypass"}


@pytest.mark.anyio
async def test_requests_carry_the_status_and_the_sessions_close_stops_the_items(
    tmp_path: Path, bypass: dict[str, Any]
) -> None:
    model = FakeModel([call("bash", command="exec sleep 300", background=True)])
    async with in_process_bridge(model, tmp_path / "data", **bypass) as bridge:
        session_id = await bridge.new_session(tmp_path)
        assert await prompt(bridge, session_id) == {"stopReason": "end_turn"}
        assert [r.status for r in model.requests] == [None, STATUS]
        assert await prompt(bridge, session_id) == {"stopReason": "end_turn"}
        assert model.requests[-1].status == STATUS
        [item] = bridge.connection.context.sessions.get(session_id).toolbox.background.items  # type: ignore[union-attr]
        assert item.running and item.pid is not None
        await bridge.call("session/close", {"sessionId": session_id})
        assert not item.running
        with pytest.raises(ProcessLookupError):
            os.kill(item.pid, 0)
    [start] = journaled(bridge, session_id, "background/start")
    assert (start["item"], start["command"]) == ("bg_1", "exec sleep 300")
    [end] = journaled(bridge, session_id, "background/end")
    assert (end["item"], end["how"], end["posix_signal"]) == ("bg_1", "stopped", 15)


@pytest.mark.anyio
async def test_a_subagents_background_command_is_the_sessions(
    tmp_path: Path, bypass: dict[str, Any]
) -> None:
    # The child starts it and ends; it runs on, and the parent's next request lists it.
    model = FakeModel(
        [call("task", prompt="start the server", description="server")],
        [call("bash", command="exec sleep 300", background=True)],
    )
    async with in_process_bridge(model, tmp_path / "data", **bypass) as bridge:
        session_id = await bridge.new_session(tmp_path)
        assert await prompt(bridge, session_id) == {"stopReason": "end_turn"}
        session = bridge.connection.context.sessions.get(session_id)
        assert session is not None and session.toolbox.background is not None
        [item] = session.toolbox.background.items
        assert item.running
        assert model.requests[-1].status == STATUS  # the parent's request after the child
        await bridge.call("session/close", {"sessionId": session_id})
        assert not item.running


STATUS = f"{HEADING}\n- bg_1 `exec sleep 300`: running"


@pytest.mark.anyio
async def test_items_that_died_with_the_last_process_are_restored_once_and_names_kept() -> None:
    # Restored: an item crash repair ended after the last turn began (the model was not told
    # yet). Not restored: one whose unknown end a later turn already listed, one that exited.
    at = "2026-12-06T00:00:00.000Z"
    records: list[rec.Record] = [
        rec.BackgroundStart(item="bg_1", call_id="c1", command="old server", at=at),
        rec.BackgroundEnd(item="bg_1", how="unknown", at=at),
        rec.TurnStart(turn_id="t1", at=at),
        rec.BackgroundStart(item="bg_2", call_id="c2", command="make", at=at),
        rec.BackgroundEnd(item="bg_2", how="exited", exit_code=0, at=at),
        rec.BackgroundStart(item="bg_3", call_id="c3", command="npm run dev", at=at),
        rec.BackgroundEnd(item="bg_3", how="unknown", at=at),
    ]
    items = BackgroundItems(None, None)
    log = SessionLog("s1", records)
    follow_background(SimpleNamespace(background=items), log, records)  # type: ignore[arg-type]
    assert [item.name for item in items.items] == ["bg_3"]
    assert status_of(items) == (
        f"{HEADING}\n- bg_3 `npm run dev`: ended with the agent process that ran it; its "
        "outcome is unknown"
    )
    async with anyio.create_task_group() as tg:
        items = BackgroundItems(tg, None)
        follow_background(SimpleNamespace(background=items), log, records)  # type: ignore[arg-type]
        item = await items.start(["true"], command="true", call_id="c4", cwd="/")
        assert item.name == "bg_4"  # never an earlier one's name
        await item.wait()
    assert list(log.records[-2:]) == [
        rec.BackgroundStart(item="bg_4", call_id="c4", command="true", at=log.records[-2].at),
        rec.BackgroundEnd(item="bg_4", how="exited", exit_code=0, at=log.records[-1].at),
    ]
