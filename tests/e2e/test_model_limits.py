"""A real model's limits through the real process and the official SDK client, against a local
OpenAI-compatible server: the window discovered from llama.cpp's `/props` sizes `usage_update`,
a context-exceeded answer is a clear error naming window and request size, a tool call cut by
the output limit ends `max_tokens`, a malformed tool call is answered back to the model, and a
model repeating itself is stopped with a message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.support.agent_process import running_agent
from tests.support.openai_agent import (
    WINDOW_16K,
    WINDOW_4096,
    chat_bodies,
    chunk,
    environment,
    start,
    text_reply,
    tool_call,
    updates_of,
)
from tests.support.sse_server import json_reply, openai_chunks, serve

pytestmark = pytest.mark.anyio


async def test_the_window_from_llamacpp_props_sizes_usage_update(tmp_path: Path) -> None:
    props = {"default_generation_settings": {"n_ctx": 4096}}
    usage = {"prompt_tokens": 812, "completion_tokens": 5}
    replies = [
        json_reply(404, {"error": "no such route"}),  # GET /v1/models
        json_reply(200, props),  # GET /props
        text_reply("hi", usage),
        text_reply("again", usage),
    ]
    async with serve(*replies) as server:
        env = environment(tmp_path, server)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            sid = await start(conn, tmp_path)
            await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            await conn.prompt(session_id=sid, prompt=[text_block("hello again")])
    assert [(s.method, s.path) for s in server.requests] == [
        ("GET", "/v1/models"),
        ("GET", "/props"),
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/chat/completions"),
    ]  # discovered once, lazily, at the first prompt
    sizes = [(u.used, u.size) for u in updates_of(client, "usage_update")]
    assert sizes == [(817, 4096), (817, 4096)]


async def test_context_exceeded_is_a_clear_error_naming_window_and_size(tmp_path: Path) -> None:
    llama_400 = {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5213,
            "n_ctx": 4096,
        }
    }
    async with serve(json_reply(400, llama_400)) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, _, _):
            sid = await start(conn, tmp_path)
            with pytest.raises(RequestError) as caught:
                await conn.prompt(session_id=sid, prompt=[text_block("x " * 2000)])
    error = caught.value
    assert error.code == -32603
    assert "a request of 5213 tokens does not fit in the 4096-token context window" in str(error)
    assert error.data == {"code": "context_window_exceeded"}
    assert [s.path for s in server.requests] == ["/v1/chat/completions"]  # never retried


async def test_a_tool_call_cut_by_the_output_limit_ends_max_tokens(tmp_path: Path) -> None:
    cut = {
        "tool_calls": [
            {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": '{"pa'}}
        ]
    }
    reply = openai_chunks([chunk(cut), chunk(finish_reason="length")])
    async with serve(reply) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("read it")])
    assert response.stop_reason == "max_tokens"
    # Shown while it was written (tests/e2e/test_progress.py), it never ran: it ends failed.
    [shown] = updates_of(client, "tool_call")
    assert shown.tool_call_id.startswith("call_")  # the agent's own id, not the model's "c1"
    assert [u.status for u in updates_of(client, "tool_call_update")][-1] == "failed"


async def test_a_malformed_tool_call_is_answered_back_to_the_model(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    replies = [
        tool_call("c1", "read_file", '{"path": "notes.txt",'),  # not JSON
        tool_call("c2", "read_file", '{"file": "notes.txt"}'),  # not the schema
        tool_call("c3", "read_fil", '{"path": "notes.txt"}'),  # no such tool
        tool_call("c4", "read_file", '{"path": "notes.txt"}'),
        text_reply("It says to remember the milk."),
    ]
    async with serve(*replies) as server:
        env = environment(tmp_path, server, WINDOW_16K)  # four calls fit uncompacted
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, frames, client):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("read notes")])
    assert response.stop_reason == "end_turn"
    finished = {
        u.tool_call_id: u.status
        for u in updates_of(client, "tool_call_update")
        if u.status in ("completed", "failed")
    }
    announced = [
        frame["params"]["update"]
        for frame in frames.received
        if frame.get("method") == "session/update"
        and frame["params"]["update"]["sessionUpdate"] == "tool_call"
    ]
    # The client sees the agent's own ids (one per call, unique); the model's c1..c4 stay
    # between the agent and the model server.
    ids = [u["toolCallId"] for u in announced]
    assert len(set(ids)) == 4 and not {"c1", "c2", "c3", "c4"} & set(ids)
    assert [u["name"] for u in announced] == ["read_file", "read_file", "read_fil", "read_file"]
    assert [finished[i] for i in ids] == ["failed", "failed", "failed", "completed"]
    last = chat_bodies(server)[-1]["messages"]
    answers = {m["tool_call_id"]: m["content"] for m in last if m["role"] == "tool"}
    assert "invalid arguments for read_file: the arguments are not valid JSON" in answers["c1"]
    assert "missing required property 'path'" in answers["c2"]
    assert "unknown tool 'read_fil'" in answers["c3"]
    assert "remember the milk" in answers["c4"]
    sent_calls = [m for m in last if m["role"] == "assistant" and m.get("tool_calls")]
    assert json.loads(sent_calls[0]["tool_calls"][0]["function"]["arguments"]) == {}


async def test_a_model_repeating_itself_is_stopped_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("same\n")
    replies = [tool_call(f"c{i}", "read_file", '{"path": "a.txt"}') for i in range(1, 5)]
    async with serve(*replies, text_reply("next turn")) as server:
        env = environment(tmp_path, server, WINDOW_16K)  # four calls fit uncompacted
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("read a")])
            assert len(chat_bodies(server)) == 4  # no fifth request in that turn
            await conn.prompt(session_id=sid, prompt=[text_block("go on")])
    assert response.stop_reason == "end_turn"
    chunks = updates_of(client, "agent_message_chunk")
    stop = next(u for u in chunks if u.content.text.startswith("Stopped:"))
    assert stop.content.text.startswith(
        'Stopped: the same call read_file({"path":"a.txt"}) was made 4 times in this turn'
    )
    assert stop.field_meta == {"acp-server": {"origin": "agent"}}  # the agent's, marked
    # The next turn's request never hands the notice to the model as its own words.
    sent = json.dumps(chat_bodies(server)[-1]["messages"])
    assert "Stopped:" not in sent
