"""A tool call written as text, through the real process against a local OpenAI-compatible
server: run as a call, said to the client (a chunk marked as the agent's) and in the journal
(`from_text`), read back by the model as a call; two calls in one message run in order;
switched off in the config it stays text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import text_block

from tests.e2e.test_model_limits import (
    WINDOW_4096,
    chat_bodies,
    environment,
    start,
    text_reply,
    updates_of,
)
from tests.support.agent_process import running_agent
from tests.support.sse_server import serve

pytestmark = pytest.mark.anyio

FENCED = '```json\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n```'


async def test_a_fenced_call_runs_as_a_call(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the number is 7\n")
    data = tmp_path / "data"
    async with serve(text_reply(FENCED), text_reply("It is 7.")) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(data))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("the number?")])
    assert response.stop_reason == "end_turn"
    [call] = updates_of(client, "tool_call")
    assert call.title.startswith("Read") or "notes.txt" in call.title
    done = [u for u in updates_of(client, "tool_call_update") if u.status == "completed"]
    assert done and done[0].tool_call_id == call.tool_call_id
    marked = [u for u in updates_of(client, "agent_message_chunk") if u.field_meta]
    assert marked and "wrote a read_file call as text" in marked[0].content.text
    assert marked[0].field_meta == {"acp-server": {"origin": "agent"}}
    # The model reads its call back as a call, and the result after it.
    second = chat_bodies(server)[1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert not assistant["content"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": "notes.txt"}
    assert "the number is 7" in next(m for m in second if m["role"] == "tool")["content"]
    journal = (data / "sessions" / f"{sid}.jsonl").read_text()
    assert '"from_text":true' in journal.replace(" ", "")


TWO = (
    '{"name": "read_file", "arguments": {"path": "notes.txt"}}\n'
    '{"name": "read_file", "arguments": {"path": "other.txt"}}'
)


async def test_a_message_of_two_calls_runs_both_in_order(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the number is 7\n")
    (tmp_path / "other.txt").write_text("the other number is 8\n")
    data = tmp_path / "data"
    async with serve(text_reply(TWO), text_reply("7 and 8.")) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(data))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("the numbers?")])
    assert response.stop_reason == "end_turn"
    first, second = updates_of(client, "tool_call")
    assert "notes.txt" in first.title and "other.txt" in second.title
    done = [
        u.tool_call_id for u in updates_of(client, "tool_call_update") if u.status == "completed"
    ]
    assert done == [first.tool_call_id, second.tool_call_id]
    marked = [u for u in updates_of(client, "agent_message_chunk") if u.field_meta]
    assert marked and "wrote 2 calls as text (read_file, read_file)" in marked[0].content.text
    # The model reads one assistant message with both calls back, then both results.
    messages = chat_bodies(server)[1]["messages"]
    assistant = next(m for m in messages if m["role"] == "assistant")
    assert not assistant["content"]
    paths = [json.loads(c["function"]["arguments"])["path"] for c in assistant["tool_calls"]]
    assert paths == ["notes.txt", "other.txt"]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert "the number is 7" in results[0] and "the other number is 8" in results[1]
    journal = (data / "sessions" / f"{sid}.jsonl").read_text().replace(" ", "")
    assert journal.count('"from_text":true') == 2


async def test_switched_off_it_stays_text(tmp_path: Path) -> None:
    config = WINDOW_4096 + "text_tool_calls = false\n"
    async with serve(text_reply(FENCED)) as server:
        env = environment(tmp_path, server, config)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("the number?")])
    assert response.stop_reason == "end_turn"
    assert updates_of(client, "tool_call") == []
    assert len(chat_bodies(server)) == 1
