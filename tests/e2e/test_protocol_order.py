"""Protocol order through the real process: `initialize` comes first, and a repeated one is
answered as the first without renegotiating (docs/protocol.md, "Methods")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import ClientCapabilities, FileSystemCapabilities

from acp_server.acp.methods.handshake import NOT_INITIALIZED_MESSAGE
from tests.support.agent_process import running_agent

pytestmark = pytest.mark.anyio


async def test_every_request_before_initialize_names_the_rule(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with running_agent("--model", "echo", "--data-dir", str(data)) as (conn, _, frames, _):
        refused = []
        for call in (
            lambda: conn.new_session(cwd=str(tmp_path), mcp_servers=[]),
            lambda: conn.list_sessions(),
            lambda: conn.prompt(session_id="sess_x", prompt=[]),
            lambda: conn.authenticate(method_id="configure-model"),
            lambda: conn.ext_method("example.com/anything", {}),  # unknown: the rule first
        ):
            with pytest.raises(RequestError) as caught:
                await call()
            refused.append(caught.value)
        # A notification before initialize is not answered and changes nothing.
        await conn.cancel(session_id="sess_x")
        # Once initialized, the same connection works.
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
    assert [e.code for e in refused] == [-32600] * 5
    assert all(str(e).startswith(NOT_INITIALIZED_MESSAGE) for e in refused)
    assert "initialize" in NOT_INITIALIZED_MESSAGE
    errors = [f["error"] for f in frames.received if "error" in f]
    assert [e["message"] for e in errors] == [NOT_INITIALIZED_MESSAGE] * 5
    assert "'session/new' arrived before initialize" in errors[0]["data"]
    # The refused session/new created nothing: the one made afterwards is the only journal.
    assert [p.stem for p in (data / "sessions").glob("*.jsonl")] == [session.session_id]


async def test_a_second_initialize_is_answered_as_the_first_and_renegotiates_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("on disk\n")
    model = tmp_path / "model.json"
    read = {"tool_call": {"name": "read_file", "arguments": {"path": "notes.txt"}}}
    model.write_text(json.dumps({"responses": [[read], [{"text": "done"}]]}))
    args = ("--model", f"script:{model}", "--data-dir", str(tmp_path / "data"))
    async with running_agent(*args) as (conn, _, frames, client):
        first = await conn.initialize(protocol_version=1)
        # The second claims file system access: the first negotiation stands, so the session's
        # tools keep using the local disk and never ask the client for a file.
        second = await conn.initialize(
            protocol_version=2,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
            ),
        )
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        answer = await conn.prompt(
            session_id=session.session_id, prompt=[{"type": "text", "text": "read it"}]
        )
    assert second.protocol_version == first.protocol_version == 1
    answers = [f["result"] for f in frames.received if "result" in f and f["id"] in (0, 1)]
    assert answers[0] == answers[1]
    assert answer.stop_reason == "end_turn"
    assert not [f for f in frames.received if f.get("method", "").startswith("fs/")]
    done = [u for _, u in client.updates if getattr(u, "status", None) == "completed"]
    assert done and "on disk" in json.dumps([u.model_dump(mode="json") for u in done])
    assert len(list((tmp_path / "data" / "sessions").glob("*.jsonl"))) == 1
