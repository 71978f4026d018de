"""Tool-call ids are the agent's own, through the real process, the official SDK client and a
local OpenAI-compatible server that reuses `call_1` (in two turns, and twice in one response):
the client sees every call under an id of its own, live and on `session/load` in a new process,
each with its own title, kind, status and output, while the model is sent back its own ids
to pair calls with results. A journal written before (the model's ids only, one reused) loads
with each call shown as itself and the model sent what it was sent before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from acp_server.session import records as rec
from acp_server.session.journal import JournalHeader, JournalStore
from tests.support.agent_process import running_agent
from tests.support.openai_agent import (
    WINDOW_4096,
    chat_bodies,
    chunk,
    environment,
    start,
    text_reply,
    tool_call,
)
from tests.support.sse_server import Reply, openai_chunks, serve

pytestmark = pytest.mark.anyio


def two_calls_under_one_id() -> Reply:
    """One response asking for two reads, both as `call_1` (a server numbering per response)."""
    calls = [
        {
            "index": index,
            "id": "call_1",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": path})},
        }
        for index, path in enumerate(["b.txt", "a.txt"])
    ]
    return openai_chunks([chunk({"tool_calls": calls}), chunk(finish_reason="tool_calls")])


def shown_calls(updates: list[tuple[str, Any]]) -> dict[str, tuple[str, str, str, str]]:
    """Each call the client was shown, by id: its last title, kind, status and output."""
    calls: dict[str, list[str]] = {}
    for _, update in updates:
        if update.session_update == "tool_call":
            assert update.tool_call_id not in calls, "a toolCallId announced twice"
            calls[update.tool_call_id] = [update.title, update.kind, update.status, ""]
        elif update.session_update == "tool_call_update":
            shown = calls[update.tool_call_id]
            for at, value in enumerate((update.title, update.kind, update.status)):
                shown[at] = value or shown[at]
            for content in update.content or []:
                shown[3] += getattr(getattr(content, "content", None), "text", "")
    return {call_id: (t, k, s, o) for call_id, (t, k, s, o) in calls.items()}


async def test_a_server_reusing_its_ids_changes_nothing_the_client_sees(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    data = tmp_path / "data"
    replies = [
        tool_call("call_1", "read_file", '{"path": "a.txt"}'),
        text_reply("one"),
        tool_call("call_1", "list_dir", "{}"),
        text_reply("two"),
        two_calls_under_one_id(),
        text_reply("three"),
    ]
    async with serve(*replies) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(data))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            sid = await start(conn, tmp_path)
            for prompt in ("read a", "list", "read both"):
                answer = await conn.prompt(session_id=sid, prompt=[text_block(prompt)])
                assert answer.stop_reason == "end_turn"
    live = shown_calls(client.updates)
    assert len(live) == 4 and "call_1" not in live  # four calls, four ids, all ours
    outputs = [output for _, _, _, output in live.values()]
    assert "alpha" in outputs[0] and "a.txt" in outputs[1]
    assert "beta" in outputs[2] and "alpha" in outputs[3]
    assert {status for _, _, status, _ in live.values()} == {"completed"}
    # The model is sent its own ids back, each result paired with its call.
    bodies = chat_bodies(server)
    second = bodies[1]["messages"]
    assert [c["id"] for c in second[-2]["tool_calls"]] == ["call_1"]
    assert second[-1]["tool_call_id"] == "call_1"
    last = bodies[5]["messages"]
    asked = [c["id"] for c in last[-3]["tool_calls"]]
    assert asked[0] == "call_1" != asked[1]  # the repeat got an id the request can pair
    assert [m["tool_call_id"] for m in last[-2:]] == asked
    assert "beta" in last[-2]["content"] and "alpha" in last[-1]["content"]

    async with serve() as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(data))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            await conn.initialize(protocol_version=1)
            await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    assert shown_calls(client.updates) == live


async def test_a_journal_written_before_loads_each_call_as_itself(tmp_path: Path) -> None:
    """Today's format, the model's ids only: `call_1` in two turns (a read, then a listing)."""
    at = "2026-12-01T00:00:00.000Z"
    data = tmp_path / "data"
    store = JournalStore(data)
    journal = store.create(JournalHeader(session_id="old", cwd=str(tmp_path), created_at=at))
    for turn_id, name, arguments, title, kind, output in [
        ("t1", "read_file", {"path": "a.txt"}, "Read a.txt", "read", "alpha"),
        ("t2", "list_dir", {}, "List .", "search", "a.txt"),
    ]:
        for record in [
            rec.TurnStart(turn_id=turn_id, at=at),
            rec.UserMessage(
                message_id=f"u_{turn_id}",
                content=[rec.TextPart(text=name)],
                origin="prompt",
                turn_id=turn_id,
                at=at,
            ),
            rec.AssistantMessage(
                turn_id=turn_id,
                message_id=f"a_{turn_id}",
                parts=[],
                tool_calls=[rec.ToolCallRecord(call_id="call_1", name=name, arguments=arguments)],
                at=at,
            ),
            rec.ToolResult(
                turn_id=turn_id,
                call_id="call_1",
                status="completed",
                output=output,
                title=title,
                kind=kind,
                at=at,
            ),
            rec.TurnEndRecord(turn_id=turn_id, outcome=rec.Completed(), at=at),
        ]:
            journal.append(record)
    journal.close()

    async with serve(text_reply("still here")) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(data))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            await conn.initialize(protocol_version=1)
            await conn.load_session(session_id="old", cwd=str(tmp_path), mcp_servers=[])
            replayed = shown_calls(client.updates)
            await conn.prompt(session_id="old", prompt=[text_block("and now?")])
    assert list(replayed.values()) == [
        ("Read a.txt", "read", "completed", "alpha"),
        ("List .", "search", "completed", "a.txt"),
    ]
    # The model reads the conversation as it did when it was written: its own ids, paired.
    messages = chat_bodies(server)[0]["messages"]
    asked = [c["id"] for m in messages if m["role"] == "assistant" for c in m["tool_calls"]]
    answered = [(m["tool_call_id"], m["content"]) for m in messages if m["role"] == "tool"]
    assert asked == ["call_1", "call_1"]
    assert answered == [("call_1", "alpha"), ("call_1", "a.txt")]
