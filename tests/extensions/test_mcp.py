"""The MCP manager in-process, against the FastMCP test server over stdio and HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.extensions import mcp as mcp_module
from acp_server.extensions.mcp import McpServerConfig, McpServers, tool_name
from acp_server.tools.base import Tool
from tests.support.mcp_calls import in_flight
from tests.support.processes import alive, wait_for_pids
from tests.support.programs import MCP_SERVER
from tests.support.tool_call import a_call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


def stdio_config(
    name: str = "demo", pidfile: Path | None = None, calls: Path | None = None
) -> McpServerConfig:
    env = {"MCP_TEST_PIDFILE": str(pidfile)} if pidfile else {}
    env |= {"MCP_TEST_CALLS": str(calls)} if calls else {}
    return McpServerConfig(name=name, command=sys.executable, args=(MCP_SERVER,), env=env)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, MCP_SERVER, "http", str(port)],
        start_new_session=True,
        env={**os.environ, "MCP_TEST_CALLS": str(tmp_path / "calls")},
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, 9)
        process.wait()


@asynccontextmanager
async def manager(*servers: McpServerConfig) -> AsyncIterator[tuple[McpServers, list[Tool]]]:
    added: list[Tool] = []
    async with anyio.create_task_group() as tg:
        mcp = McpServers(list(servers), os.getcwd(), added.extend)
        mcp.start(tg)
        try:
            await mcp.ready(20)
            yield mcp, added
        finally:
            await mcp.aclose()


async def cancel_in_flight(tool: Tool, calls: Path) -> None:
    """Run the 300 s `slow` tool, abort its turn once the server runs the call, and require the
    call to end with `TurnAborted` long before the tool would have."""
    cancellation = TurnCancellation()

    async def cancel_when_running() -> None:
        await in_flight(calls)
        cancellation.abort(UserCancel())

    with anyio.fail_after(60):  # a guard against a hang, five times shorter than the tool
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_running)
            with pytest.raises(TurnAborted):
                await tool.run({}, a_call(), cancellation.signal)


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


async def test_stdio_tools_calls_and_cleanup(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    async with manager(stdio_config(pidfile=pidfile)) as (mcp, added):
        assert mcp.take_failures() == []
        tools = by_name(added)
        assert set(tools) == {"mcp__demo__echo", "mcp__demo__slow", "mcp__demo__fail"}
        echo = tools["mcp__demo__echo"]
        assert echo.kind == "read"
        assert tools["mcp__demo__slow"].kind == "other"
        assert echo.parameters["properties"]["text"]["type"] == "string"
        signal = TurnCancellation().signal
        out = await echo.run({"text": "hi"}, a_call(), signal)
        assert out.text == "echo: hi" and not out.failed
        failed = await tools["mcp__demo__fail"].run({}, a_call(), signal)
        assert failed.failed and "always fails" in failed.text
        pids = [int(p) for p in pidfile.read_text().split()]
        assert pids and all(alive(p) for p in pids)
        assert mcp.pids
    assert all(not alive(p) for p in pids)


async def test_slow_call_is_cancelled_at_once(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    async with manager(stdio_config(calls=calls)) as (_, added):
        await cancel_in_flight(by_name(added)["mcp__demo__slow"], calls)
        # the session still works after the cancelled call
        echo = by_name(added)["mcp__demo__echo"]
        out = await echo.run({"text": "again"}, a_call(), TurnCancellation().signal)
        assert out.text == "echo: again"


async def test_missing_binary_is_reported_once() -> None:
    bad = McpServerConfig(name="ghost", command="no-such-binary")
    async with manager(bad, stdio_config()) as (mcp, added):
        failures = mcp.take_failures()
        assert len(failures) == 1 and "ghost" in failures[0] and "no-such-binary" in failures[0]
        assert mcp.take_failures() == []
        assert "mcp__demo__echo" in by_name(added)


async def test_a_transport_we_cannot_reach_fails_that_server_alone() -> None:
    unknown = McpServerConfig(name="newer", transport="acp", url="x")
    async with manager(unknown, stdio_config()) as (mcp, added):
        [failure] = mcp.take_failures()
        assert "newer" in failure and "unsupported MCP transport 'acp'" in failure
        assert "mcp__demo__echo" in by_name(added)


async def test_streamable_http(http_server: str, tmp_path: Path) -> None:
    config = McpServerConfig(name="web", transport="http", url=http_server, headers={"X-Test": "1"})
    async with manager(config) as (mcp, added):
        assert mcp.take_failures() == []
        tools = by_name(added)
        out = await tools["mcp__web__echo"].run(
            {"text": "over http"}, a_call(), TurnCancellation().signal
        )
        assert out.text == "echo: over http"
        await cancel_in_flight(tools["mcp__web__slow"], tmp_path / "calls")


async def test_closing_does_not_wait_for_a_server_still_starting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stdio server that never answers `initialize`. Closing the session stops it at once; it
    # used to wait until the connect timeout ran out (30 s), and the agent's exit with it.
    monkeypatch.setattr(mcp_module, "CONNECT_TIMEOUT", 60.0)  # the guard below fails first
    pidfile = tmp_path / "pid"
    silent = McpServerConfig(
        name="silent", command="sh", args=("-c", f"echo $$ > {pidfile}; exec sleep 300")
    )
    closed = anyio.Event()
    async with anyio.create_task_group() as tg:
        mcp = McpServers([silent], str(tmp_path), lambda tools: None)
        mcp.start(tg)
        [pid] = await wait_for_pids(pidfile)

        async def close() -> None:
            await mcp.aclose()
            closed.set()

        tg.start_soon(close)
        with anyio.fail_after(20):
            await closed.wait()
    assert not alive(pid)
    assert mcp.take_failures() == []  # the session is closing: nobody is left to tell


def test_tool_names_are_safe() -> None:
    assert tool_name("my server.v2", "do/it") == "mcp__my_server_v2__do_it"
