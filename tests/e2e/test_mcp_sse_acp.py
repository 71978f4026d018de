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
from typing import Any

import pytest
from acp import text_block
from acp.schema import HttpHeader, HttpMcpServer, SseMcpServer

from tests.support.agent_process import running_agent
from tests.support.programs import MCP_SERVER
from tests.support.scripted_model import script
from tests.support.sse_server import json_reply, serve
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


async def test_tokens_in_mcp_urls_reach_neither_stderr_nor_the_client(
    tmp_path: Path, sse_url: str
) -> None:
    # One server that answers (its URL carries `?token=`), one HTTP server that refuses with
    # 401 (its URL carries `?api_key=` and a password; the HTTP client's error names the URL),
    # and one that is not there: the default log level logs the failures and the client is
    # told about them, with no secret in either.
    secrets = ("Tok3n-Secret-0001", "Api-Key-Secret-0002", "Pass-Secret-0003", "Sig-Secret-04")
    stderr_path = tmp_path / "stderr"
    async with serve(*[json_reply(401, {"error": "no"})] * 8) as refusing:
        servers: list[Any] = [
            SseMcpServer(type="sse", name="ok", url=f"{sse_url}?token={secrets[0]}", headers=[]),
            HttpMcpServer(
                type="http",
                name="refusing",
                url=f"http://bob:{secrets[2]}@127.0.0.1:{refusing.port}/mcp?api_key={secrets[1]}",
                headers=[],
            ),
            SseMcpServer(
                type="sse",
                name="gone",
                url=f"http://127.0.0.1:{free_port()}/sse?x=1&sig={secrets[3]}",
                headers=[],
            ),
        ]
        with stderr_path.open("wb") as stderr:
            async with running_agent("--model", "echo", env=SANDBOXED, stderr=stderr) as (
                conn,
                _,
                frames,
                _,
            ):
                await conn.initialize(protocol_version=1)
                sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=servers)).session_id
                await conn.prompt(session_id=sid, prompt=[text_block("hi")])
    logged = stderr_path.read_text()
    received = str(frames.received)
    for name in ("refusing", "gone"):  # the failures were logged and told
        assert name in logged and name in received
    assert "401" in logged
    for secret in secrets:
        assert secret not in logged
        assert secret not in received
