"""A tool call written as text, through the real process against a local OpenAI-compatible
server: run as a call, said to the client (a chunk marked as the agent's) and in the journal
(`from_text`), read back by the model as a call; two calls in one message run in order;
switched off in the config it stays text. While such a message streams, the call is announced
as soon as its name is written (before the message ends), under the id it then runs with; a
message that turns out not to be a call closes that announcement `failed` and stays text, and
a cancel ends it like a cancelled API call."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block

from tests.support.agent_process import FrameLog, running_agent
from tests.support.openai_agent import (
    WINDOW_4096,
    chat_bodies,
    chunk,
    environment,
    start,
    text_reply,
    updates_of,
)
from tests.support.sse_server import Reply, openai_chunks, serve

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
    [call] = updates_of(client, "tool_call")  # announced from the text's start, as a draft
    assert (call.title, call.kind, call.status) == ("read_file", "read", "pending")
    titled = [u for u in updates_of(client, "tool_call_update") if u.title]
    assert [u.tool_call_id for u in titled] == [call.tool_call_id]  # completed at the end
    assert "notes.txt" in titled[0].title
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
    # The first was announced from the text's start (its title completed when it ran); the
    # second only once the message had ended, as before.
    titled = [u for u in updates_of(client, "tool_call_update") if u.title]
    assert [u.tool_call_id for u in titled] == [first.tool_call_id]
    assert "notes.txt" in titled[0].title and "other.txt" in second.title
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


def streamed(pieces: list[str], delay: float, *, end: bool = True) -> Reply:
    """A message written in `pieces`, `delay` seconds before each (a slow local model)."""
    chunks = [chunk({"content": piece}) for piece in pieces]
    if end:
        chunks.append(chunk(finish_reason="stop"))
    reply = openai_chunks(chunks, done=end)
    reply.delay = delay
    return reply


def wire_updates(frames: FrameLog) -> list[dict[str, Any]]:
    return [f["params"]["update"] for f in frames.received if f.get("method") == "session/update"]


def model_text(updates: list[dict[str, Any]]) -> str:
    """The model's own message text (not the agent's marked notes)."""
    return "".join(
        u["content"]["text"]
        for u in updates
        if u["sessionUpdate"] == "agent_message_chunk" and "_meta" not in u
    )


# The name is complete in the fourth piece; the arguments follow over four more.
SLOW_CALL = [
    "```json\n",
    '{"na',
    'me": "rea',
    'd_file", ',
    '"arguments": {',
    '"path": "notes.txt", ',
    '"limit": 5',
    "}}\n",
    "```",
]


async def test_a_call_written_as_text_is_announced_before_the_message_ends(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("the number is 7\n")
    # 250 ms before each piece: longer than the 200 ms between two raw-input updates.
    async with serve(streamed(SLOW_CALL, 0.25), text_reply("It is 7.")) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("the number?")])
        async with running_agent(*args, env=env) as (conn, _, _, replayed):
            await conn.initialize(protocol_version=1)
            await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    assert response.stop_reason == "end_turn"
    updates = wire_updates(frames)
    kinds = [u["sessionUpdate"] for u in updates]
    [announced_at] = [i for i, kind in enumerate(kinds) if kind == "tool_call"]
    model_chunks = [
        i for i, u in enumerate(updates) if kinds[i] == "agent_message_chunk" and "_meta" not in u
    ]
    # Announced after the piece that completed the name, before the message's next piece.
    assert model_chunks[3] < announced_at < model_chunks[4]
    announced = updates[announced_at]
    call_id = announced["toolCallId"]
    assert (announced["status"], announced["kind"], announced["title"]) == (
        "pending",
        "read",
        "read_file",
    )
    assert "rawInput" not in announced  # nothing of the arguments was known yet
    # While the rest streams, the raw input is what parses of the arguments: always an object.
    mine = [u for u in updates if u.get("toolCallId") == call_id]
    # (Each piece comes 250 ms after the last, so at least one update is due.)
    drafts = [u["rawInput"] for u in mine[1:] if "rawInput" in u and "status" not in u]
    whole = {"path": "notes.txt", "limit": 5}
    assert drafts and all(isinstance(d, dict) for d in drafts)
    assert all(d.items() <= whole.items() for d in drafts)  # complete members only
    assert all(a.items() < b.items() for a, b in pairwise(drafts))
    # The message ends: the same call completes its announcement, runs and completes.
    final = next(
        u for u in mine if u.get("status") == "pending" and "title" in u and u is not announced
    )
    assert final["rawInput"] == whole
    assert "notes.txt" in final["title"]
    assert mine[-1]["status"] == "completed"
    assert kinds.count("tool_call") == 1
    assert model_text(updates) == "".join(SLOW_CALL) + "It is 7."
    assert len(chat_bodies(server)) == 2
    # Replayed: the one call under the same id, with its input and final status.
    history = [u for _, u in replayed.updates]
    [again] = [u for u in history if u.session_update == "tool_call"]
    assert (again.tool_call_id, again.raw_input) == (call_id, whole)
    ends = [u.status for u in history if u.session_update == "tool_call_update"]
    assert ends == ["completed"]


NOT_A_CALL = [
    '{"name": ',
    '"read_file", ',
    '"arguments": {"path": "notes.txt"}}',
    " is how you would read it.",
]


async def test_a_message_that_is_not_a_call_after_all_closes_the_announcement(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("the number is 7\n")
    data = tmp_path / "data"
    async with serve(streamed(NOT_A_CALL, 0.05)) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(data))
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("how?")])
        async with running_agent(*args, env=env) as (conn, _, _, replayed):
            await conn.initialize(protocol_version=1)
            await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    assert response.stop_reason == "end_turn"
    updates = wire_updates(frames)
    [announced] = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    mine = [u for u in updates if u.get("toolCallId") == announced["toolCallId"]]
    statuses = [u["status"] for u in mine if "status" in u]  # (raw-input updates aside)
    assert statuses == ["pending", "failed"]  # never run
    assert "not a tool call" in mine[-1]["content"][0]["content"]["text"]
    assert model_text(updates) == "".join(NOT_A_CALL)  # the text is kept, all of it
    assert not [u for u in updates if u["sessionUpdate"] == "agent_message_chunk" and "_meta" in u]
    assert len(chat_bodies(server)) == 1
    # Replayed as what it is: text. The announcement was a draft, like an API call cut short.
    history = [u for _, u in replayed.updates]
    assert [u.session_update for u in history if "tool_call" in u.session_update] == []
    texts = [u.content.text for u in history if u.session_update == "agent_message_chunk"]
    assert "".join(texts) == "".join(NOT_A_CALL)


async def test_a_cancel_ends_an_announced_text_call_like_an_api_call(tmp_path: Path) -> None:
    held = streamed(["<tool_call>\n", '{"name": "bash", "arguments": {"comm'], 0.0, end=False)
    held.hold = True  # the model "writes" nothing more until the client gives up
    async with serve(held) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, frames, client):
            sid = await start(conn, tmp_path)
            result: list[Any] = []
            async with anyio.create_task_group() as tg:

                async def prompt() -> None:
                    result.append(await conn.prompt(session_id=sid, prompt=[text_block("run")]))

                tg.start_soon(prompt)
                with anyio.fail_after(10):
                    while not updates_of(client, "tool_call"):
                        await client.wait_for_updates(len(client.updates) + 1)
                await conn.cancel(session_id=sid)
    assert result[0].stop_reason == "cancelled"
    updates = wire_updates(frames)
    [announced] = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert (announced["status"], announced["kind"]) == ("pending", "execute")
    mine = [u for u in updates if u.get("toolCallId") == announced["toolCallId"]]
    assert mine[-1]["status"] == "failed"
    assert mine[-1]["content"][0]["content"]["text"] == "cancelled"
    assert server.requests[-1].closed.is_set()
