"""`notice` updates through the real process and the official SDK client, only for a client
that advertised `clientCapabilities.session.notices`: an MCP server that failed to start, a
hooks file waiting for consent, a model falling back. A client that did not opt in gets what
it got before and never a notice."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import McpServerStdio

from tests.support.agent_process import FrameLog, running_agent
from tests.support.scripted_model import script
from tests.support.tool_client import DONE, ToolClient

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

OPTED_IN = {"session": {"notices": {}}}


async def initialize(conn: Any, capabilities: dict[str, Any]) -> None:
    # The SDK's capability types predate `session.notices`: send the frame as a client would.
    await conn._conn.send_request(
        "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
    )


def updates_of(frames: FrameLog, kind: str) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in frames.received
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == kind
    ]


def notice_titled(frames: FrameLog, title: str) -> dict[str, Any]:
    """The one notice with this title. Others may come too: where bubblewrap cannot run, an
    opted-in client is also told that sandboxed mode is not available."""
    [notice] = [n for n in updates_of(frames, "notice") if n["title"] == title]
    return notice


def message_text(frames: FrameLog) -> str:
    return "".join(u["content"]["text"] for u in updates_of(frames, "agent_message_chunk"))


@pytest.mark.parametrize("opted_in", [True, False])
async def test_a_failed_mcp_server_is_a_notice_only_for_a_client_that_opted_in(
    tmp_path: Path, opted_in: bool
) -> None:
    ghost = McpServerStdio(name="ghost", command="no-such-binary", args=[], env=[])
    spec = script(tmp_path, [{"text": "answer"}])
    async with running_agent("--model", spec) as (conn, _, frames, _):
        await initialize(conn, OPTED_IN if opted_in else {})
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[ghost])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert response.stop_reason == "end_turn"
    if opted_in:
        notice = notice_titled(frames, "MCP server 'ghost' is unavailable")
        assert notice["severity"] == "warning"
        assert "no-such-binary" in notice["description"]
        assert message_text(frames) == "answer"  # not in the conversation
    else:
        assert updates_of(frames, "notice") == []  # never a notice without opting in
        assert "ghost" in message_text(frames) and "no-such-binary" in message_text(frames)


@pytest.mark.parametrize("opted_in", [True, False])
async def test_a_hooks_file_waiting_for_consent_is_a_notice(tmp_path: Path, opted_in: bool) -> None:
    ws = tmp_path / "ws"
    hooks = ws / ".acp-server" / "hooks.json"
    hooks.parent.mkdir(parents=True)
    hooks.write_text(json.dumps({"hooks": {"prompt_submit": [{"command": "true"}]}}))
    config = tmp_path / "config"
    config.mkdir()
    client = ToolClient(["allow_once"])
    spec = script(tmp_path, DONE)
    env = {"XDG_CONFIG_HOME": str(config)}
    async with running_agent("--model", spec, client=client, env=env) as (conn, _, frames, _):
        await initialize(conn, OPTED_IN if opted_in else {})
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
    assert response.stop_reason == "end_turn"
    assert client.asked_titles == [f"Run hooks from {hooks}"]
    if not opted_in:
        assert updates_of(frames, "notice") == []
        return
    notice = notice_titled(frames, f"Hooks file {hooks} waits for your consent")
    assert "prompt_submit: true" in notice["description"]
    # The notice came before the permission request it announces.
    notice_at = next(
        i for i, f in enumerate(frames.received) if f.get("params", {}).get("update") == notice
    )
    asked_at = next(
        i for i, f in enumerate(frames.received) if f.get("method") == "session/request_permission"
    )
    assert notice_at < asked_at


@pytest.mark.parametrize("opted_in", [True, False])
async def test_a_model_no_longer_offered_falls_back_with_a_notice(
    tmp_path: Path, opted_in: bool
) -> None:
    spec = script(tmp_path, [{"text": "scripted"}])
    config = tmp_path / "config" / "acp-server" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'default_model = "echo"\nmodels = ["echo", "{spec}"]\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    data = str(tmp_path / "data")
    async with running_agent("--data-dir", data, env=env) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.set_config_option(config_id="model", session_id=sid, value=spec)

    config.write_text('default_model = "echo"\nmodels = ["echo"]\n')  # the script is gone
    async with running_agent("--data-dir", data, env=env) as (conn, _, frames, _):
        await initialize(conn, OPTED_IN if opted_in else {})
        loaded = await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        await conn.prompt(session_id=sid, prompt=[text_block("still here")])
    model = next(o for o in loaded.config_options if o.id == "model")
    assert model.current_value == "echo"
    assert message_text(frames) == "still here"  # echo answered
    if not opted_in:
        assert updates_of(frames, "notice") == []
        return
    notice = notice_titled(frames, "The session's model is not available; using echo")
    assert notice["severity"] == "warning"
    assert spec in notice["description"]
    load_id = next(f["id"] for f in frames.sent if f.get("method") == "session/load")
    answered = next(i for i, f in enumerate(frames.received) if f.get("id") == load_id)
    noticed = next(
        i for i, f in enumerate(frames.received) if f.get("params", {}).get("update") == notice
    )
    assert noticed < answered  # a load tells everything before its answer
