"""MCP servers from session/new through the real `acp-server`: the scripted model calls the
test server's tools (`tests/support/mcp_server.py`), a slow call is cancelled, a missing server
is reported once, and no server process outlives the session or the connection."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block
from acp.schema import EnvVariable, McpServerStdio

from tests.support.agent_process import running_agent
from tests.support.mcp_calls import in_flight
from tests.support.processes import alive, read_pids
from tests.support.programs import MCP_SERVER
from tests.support.scripted_model import script
from tests.support.tool_client import (
    SANDBOXED,
    ToolClient,
    call,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


def demo(pidfile: Path, calls: Path | None = None) -> McpServerStdio:
    env = [EnvVariable(name="MCP_TEST_PIDFILE", value=str(pidfile))]
    if calls is not None:
        env.append(EnvVariable(name="MCP_TEST_CALLS", value=str(calls)))
    return McpServerStdio(name="demo", command=sys.executable, args=[MCP_SERVER], env=env)


async def pids_of(pidfile: Path, within: float = 10.0) -> list[int]:
    with anyio.fail_after(within):
        while not read_pids(pidfile):  # noqa: ASYNC110 - polling another process's file
            await anyio.sleep(0.02)
    return read_pids(pidfile)


def living(pids: list[int]) -> list[int]:
    return [p for p in pids if alive(p)]


async def wait_dead(pids: list[int], within: float = 10.0) -> list[int]:
    with anyio.move_on_after(within):
        while living(pids):  # noqa: ASYNC110 - polling /proc
            await anyio.sleep(0.05)
    return living(pids)


def messages(client: ToolClient) -> list[str]:
    return [u.content.text for u in client.kinds("agent_message_chunk")]


async def start(conn: Any, ws: Path, servers: list[Any]) -> str:
    await conn.initialize(protocol_version=1)
    new = await conn.new_session(cwd=str(ws), mcp_servers=servers)
    return str(new.session_id)


async def test_mcp_tools_run_and_close_reaps_the_server(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    spec = script(
        tmp_path,
        call("mcp__demo__echo", text="hello"),
        call("mcp__demo__fail"),
        [{"text": "done"}],
    )
    client = ToolClient()
    async with running_agent("--model", spec, "--mode", "bypass", client=client, env=SANDBOXED) as (
        conn,
        _,
        _,
        _,
    ):
        sid = await start(conn, tmp_path, [demo(pidfile)])
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
        finished = client.finished()
        assert [(status, text) for _, status, text in finished] == [
            ("completed", "echo: hello"),
            ("failed", finished[1][2]),
        ]
        assert "always fails" in finished[1][2]
        pids = await pids_of(pidfile)
        assert all(alive(p) for p in pids)
        await conn.close_session(session_id=sid)
        assert await wait_dead(pids, 1.0) == []  # reaped before close answered (or at once)


async def test_slow_mcp_call_is_cancelled_promptly(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    spec = script(tmp_path, call("mcp__demo__slow"), [{"text": "after"}])
    client = ToolClient()
    async with running_agent("--model", spec, "--mode", "bypass", client=client, env=SANDBOXED) as (
        conn,
        _,
        _,
        _,
    ):
        calls = tmp_path / "calls"
        sid = await start(conn, tmp_path, [demo(pidfile, calls)])
        stops: list[str] = []

        async def ask() -> None:
            response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
            stops.append(response.stop_reason)

        # A guard against a hang, five times shorter than the 300 s tool: only a cancel that
        # reached the call in flight answers in time.
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                await in_flight(calls)
                await conn.cancel(session_id=sid)
        assert stops == ["cancelled"]
        assert [status for _, status, _ in client.finished()] == ["failed"]
        pids = await pids_of(pidfile)
    # EOF: the server shuts down and takes the MCP server with it
    assert await wait_dead(pids) == []


async def test_missing_server_is_reported_once_and_the_session_works(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    spec = script(tmp_path, call("mcp__demo__echo", text="x"), [{"text": "one"}], [{"text": "two"}])
    ghost = McpServerStdio(name="ghost", command="no-such-binary", args=[], env=[])
    client = ToolClient()
    async with running_agent("--model", spec, "--mode", "bypass", client=client, env=SANDBOXED) as (
        conn,
        _,
        _,
        _,
    ):
        sid = await start(conn, tmp_path, [ghost, demo(pidfile)])
        first = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        second = await conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
        notes = [m for m in messages(client) if "ghost" in m]
        assert len(notes) == 1 and "no-such-binary" in notes[0]
        assert [s for _, s, _ in client.finished()] == ["completed"]
        pids = await pids_of(pidfile)
    assert await wait_dead(pids) == []
