"""Only tools the session's mode can use are offered to the model, through the real process
against a local OpenAI-compatible server: read-only mode offers no edits and no commands, and a
subagent (which cannot ask the user) is offered nothing that would ask, so in accept_edits it
gets no `bash`; a mode switch applies from the next request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.agent_process import running_agent
from tests.support.openai_agent import (
    WINDOW_16K,
    chat_bodies,
    environment,
    start,
    text_reply,
    tool_call,
)
from tests.support.sse_server import serve

pytestmark = pytest.mark.anyio


def offered(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools", [])}


async def test_read_only_offers_no_edits_and_no_commands(tmp_path: Path) -> None:
    async with serve(text_reply("ok"), text_reply("ok")) as server:
        env = environment(tmp_path, server, WINDOW_16K)
        args = ("--model", "openai:qwen", "--mode", "read_only", "--data-dir", str(tmp_path / "d"))
        async with running_agent(*args, env=env) as (conn, _, _, _):
            sid = await start(conn, tmp_path)
            await conn.prompt(session_id=sid, prompt=[text_block("look")])
            await conn.set_session_mode(session_id=sid, mode_id="default")
            await conn.prompt(session_id=sid, prompt=[text_block("now change it")])
    first, second = (offered(body) for body in chat_bodies(server))
    assert {"read_file", "grep", "task"} <= first
    assert not first & {"bash", "write_file", "edit_file"}
    assert {"bash", "write_file", "edit_file"} <= second


async def test_a_subagent_is_not_offered_what_would_ask(tmp_path: Path) -> None:
    task = json.dumps({"prompt": "run the tests", "description": "tests"})
    replies = [tool_call("t1", "task", task), text_reply("child done"), text_reply("done")]
    async with serve(*replies) as server:
        env = environment(tmp_path, server, WINDOW_16K)
        args = (
            "--model",
            "openai:qwen",
            "--mode",
            "accept_edits",
            "--data-dir",
            str(tmp_path / "d"),
        )
        async with running_agent(*args, env=env) as (conn, _, _, _):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("delegate")])
    assert response.stop_reason == "end_turn"
    parent, child, _ = (offered(body) for body in chat_bodies(server))
    assert {"bash", "edit_file", "task"} <= parent  # the client can be asked about bash
    assert "bash" not in child and {"read_file", "edit_file"} <= child
