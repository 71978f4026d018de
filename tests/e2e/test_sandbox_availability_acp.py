"""Where the command sandbox cannot run, through the real `acp-server` and the SDK client:
sandboxed mode is not offered, the client is told why once (a `notice` where it opted in, else
a stderr line), switching to it is refused with the reason, and a journaled sandboxed mode is
restored only where the sandbox works (elsewhere the session falls back to default, and says so).

"Cannot run" is a `bwrap` on PATH that fails the way bubblewrap does in an unprivileged
container; "missing" is a PATH without one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from tests.support.agent_process import running_agent
from tests.support.command_sandbox import needs_bwrap
from tests.support.scripted_model import script
from tests.support.tool_client import DONE, ToolClient

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(sys.platform != "linux", reason="Linux")]

NOTICES = {"session": {"notices": {}}}
NAMESPACE_ERROR = "bwrap: No permissions to create a new namespace"


def broken_bwrap(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH finds a bwrap that cannot create namespaces."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text(f"#!/bin/sh\necho '{NAMESPACE_ERROR}' >&2\nexit 1\n")
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}


def notices(frames: Any) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in frames.received
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "notice"
    ]


async def initialize(conn: Any, capabilities: dict[str, Any]) -> None:
    await conn._conn.send_request(
        "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
    )


async def test_without_a_working_bwrap_the_mode_is_not_offered_and_the_client_told_once(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, DONE)
    env = broken_bwrap(tmp_path)
    async with running_agent("--model", spec, client=ToolClient(), env=env) as (conn, _, fr, _):
        await initialize(conn, NOTICES)
        first = await conn.new_session(cwd=str(ws), mcp_servers=[])
        second = await conn.new_session(cwd=str(ws), mcp_servers=[])
        offered = [m.id for m in first.modes.available_modes]
        with pytest.raises(RequestError) as refused:
            await conn.set_session_mode(session_id=second.session_id, mode_id="sandboxed")
    assert offered == ["default", "accept_edits", "read_only", "bypass"]
    assert "sandboxed" not in [o.value for o in first.config_options[0].options]
    [notice] = notices(fr)
    assert notice["severity"] == "warning"
    assert notice["title"] == "Sandboxed mode is not available"
    assert NAMESPACE_ERROR in notice["description"]
    assert "the container itself is the sandbox" in notice["description"]
    assert NAMESPACE_ERROR in str(refused.value.data)


async def test_a_client_without_notices_gets_none_and_the_reason_goes_to_stderr(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, DONE)
    env = {"PATH": str(tmp_path / "empty")}  # no bwrap on it
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        async with running_agent("--model", spec, client=ToolClient(), env=env, stderr=stderr) as (
            conn,
            _,
            frames,
            _,
        ):
            await initialize(conn, {})
            await conn.new_session(cwd=str(ws), mcp_servers=[])
    assert notices(frames) == []
    said = log.read_text()
    assert "Sandboxed mode is not available: bwrap (bubblewrap) is not installed" in said
    assert "apt-get install bubblewrap" in said


@needs_bwrap
async def test_a_journaled_sandboxed_mode_is_restored_only_where_the_sandbox_works(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, DONE)
    data = ["--data-dir", str(tmp_path / "data")]
    async with running_agent("--model", spec, *data, client=ToolClient()) as (conn, _, _, _):
        await initialize(conn, NOTICES)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="sandboxed")
    async with running_agent("--model", spec, *data, client=ToolClient()) as (conn, _, fr, _):
        await initialize(conn, NOTICES)
        loaded = await conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[])
    assert loaded.modes.current_mode_id == "sandboxed"
    assert notices(fr) == []
    env = broken_bwrap(tmp_path)
    async with running_agent("--model", spec, *data, client=ToolClient(), env=env) as (
        conn,
        _,
        frames,
        _,
    ):
        await initialize(conn, NOTICES)
        loaded = await conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[])
    assert loaded.modes.current_mode_id == "default"
    assert [n["title"] for n in notices(frames)] == [
        "Sandboxed mode is not available",
        "Switched to default mode",
    ]
    assert "this session runs in default mode" in notices(frames)[1]["description"]
