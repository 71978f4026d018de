"""Progress while the model works, through the real process against a local OpenAI-compatible
server: a tool call is announced (`pending`, name and kind) as soon as its name has streamed,
its raw input follows the arguments, and the complete call finishes that same announcement; a
drafted call the response never completes ends `failed`, saying why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block

from tests.support.agent_process import running_agent
from tests.support.openai_agent import (
    WINDOW_4096,
    chat_bodies,
    chunk,
    environment,
    start,
    text_reply,
)
from tests.support.sse_server import openai_chunks, serve

pytestmark = pytest.mark.anyio


def call_delta(
    arguments: str, call_id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    entry: dict[str, Any] = {"index": 0, "function": function}
    if call_id is not None:
        entry["id"] = call_id
        entry["type"] = "function"
    return chunk({"tool_calls": [entry]})


def tool_updates(frames: Any) -> list[dict[str, Any]]:
    """The updates of the one tool call shown, under the agent's id (never the model's `c1`)."""
    updates = [
        frame["params"]["update"]
        for frame in frames.received
        if frame.get("method") == "session/update" and "toolCallId" in frame["params"]["update"]
    ]
    assert len({u["toolCallId"] for u in updates}) <= 1
    assert all(u["toolCallId"] != "c1" for u in updates)
    return updates


async def test_a_call_is_shown_while_its_arguments_stream(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    pieces = ['{"pa', 'th": ', '"a.txt"}']
    written = openai_chunks(
        [
            call_delta("", "c1", "read_file"),
            *(call_delta(piece) for piece in pieces),
            chunk(finish_reason="tool_calls"),
        ]
    )
    written.delay = 0.3  # longer than the 200 ms between two raw-input updates
    async with serve(written, text_reply("It says alpha.")) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("read a")])
    assert response.stop_reason == "end_turn"
    shown = tool_updates(frames)
    first = shown[0]
    assert first["sessionUpdate"] == "tool_call"
    assert (first["status"], first["kind"], first["rawInput"]) == ("pending", "read", "")
    assert [u["sessionUpdate"] for u in shown].count("tool_call") == 1
    drafts = [u["rawInput"] for u in shown[1:] if isinstance(u.get("rawInput"), str)]
    assert drafts and all('{"pa'.startswith(d) or d.startswith('{"pa') for d in drafts)
    assert drafts == sorted(drafts, key=len)  # the text only grows
    complete = next(u for u in shown if u.get("rawInput") == {"path": "a.txt"})
    assert complete["sessionUpdate"] == "tool_call_update" and complete["title"]
    assert shown[-1]["status"] == "completed"
    assert len(chat_bodies(server)) == 2


async def test_a_call_is_announced_before_its_arguments_arrive(tmp_path: Path) -> None:
    held = openai_chunks([call_delta("", "c1", "bash")], done=False)
    held.hold = True  # the model "writes" nothing more until the client gives up
    async with serve(held) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, frames, client):
            sid = await start(conn, tmp_path)
            async with anyio.create_task_group() as tg:
                result: list[Any] = []

                async def prompt() -> None:
                    result.append(await conn.prompt(session_id=sid, prompt=[text_block("run it")]))

                tg.start_soon(prompt)
                with anyio.fail_after(10):
                    while not tool_updates(frames):
                        await client.wait_for_updates(len(client.updates) + 1)
                await conn.cancel(session_id=sid)
    assert result[0].stop_reason == "cancelled"
    shown = tool_updates(frames)
    assert (shown[0]["sessionUpdate"], shown[0]["status"], shown[0]["kind"]) == (
        "tool_call",
        "pending",
        "execute",
    )
    assert shown[-1]["status"] == "failed"
    assert server.requests[-1].closed.is_set()


async def test_a_call_cut_by_the_output_limit_ends_failed(tmp_path: Path) -> None:
    cut = openai_chunks(
        [call_delta("", "c1", "read_file"), call_delta('{"pa'), chunk(finish_reason="length")]
    )
    async with serve(cut) as server:
        env = environment(tmp_path, server, WINDOW_4096)
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("read")])
    assert response.stop_reason == "max_tokens"
    shown = tool_updates(frames)
    assert shown[0]["sessionUpdate"] == "tool_call"
    assert shown[-1]["status"] == "failed"
    assert "ended before this call was complete" in str(shown[-1]["content"])
