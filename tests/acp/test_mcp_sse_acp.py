"""MCP over SSE through the real process and the official SDK client, against the test tree's
FastMCP server run with its SSE transport: advertised as `mcpCapabilities.sse`, its tools are
session tools, called like any other."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import HttpHeader, SseMcpServer

from tests.support.agent_process import running_agent
from tests.support.programs import MCP_SERVER
from tests.support.scripted_model import script
from tests.support.tool_client import SANDBOXED, ToolClient

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def sse_url() -> Iterator[str]:
    """`tests/support/mcp_server.py sse PORT`, listening; its SSE endpoint."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, MCP_SERVER, "sse", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20  # a readiness wait, not an assertion
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


async def test_an_sse_server_s_tools_are_called_through_the_session(
    tmp_path: Path, sse_url: str
) -> None:
    spec = script(
        tmp_path,
        [{"tool_call": {"name": "mcp__events__echo", "arguments": {"text": "over sse"}}}],
        [{"text": "done"}],
    )
    server = SseMcpServer(
        type="sse", name="events", url=sse_url, headers=[HttpHeader(name="X-Test", value="1")]
    )
    client = ToolClient()
    async with running_agent("--model", spec, "--mode", "bypass", client=client, env=SANDBOXED) as (
        conn,
        _,
        frames,
        _,
    ):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[server])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("echo it")])
    assert frames.received[0]["result"]["agentCapabilities"]["mcpCapabilities"] == {
        "http": True,
        "sse": True,
    }
    assert response.stop_reason == "end_turn"
    assert client.finished() == [("echo (events MCP)", "completed", "echo: over sse")]
