"""Loops the exact-repeat check used to miss, through the real process against a local
OpenAI-compatible server: the same file named two ways, a command whose output differs only in
its run time, and a command failing the same way with small variations each end the turn with a
clear message within the configured limit; the notes reach the model in the tool results."""

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
    updates_of,
)
from tests.support.sse_server import Reply, serve
from tests.support.tool_client import SANDBOXED

pytestmark = pytest.mark.anyio


async def turns(
    tmp_path: Path, replies: list[Reply], config: str = "", prompts: tuple[str, ...] = ("go",)
) -> tuple[list[Any], list[Any], list[dict[str, Any]]]:
    """`prompts`, one turn each, in one session of the real process against a server that gives
    `replies` in order: the responses, the message chunks the client got, the model requests."""
    async with serve(*replies) as server:
        env = {**environment(tmp_path, server, config + WINDOW_16K), **SANDBOXED}
        args = ("--model", "openai:qwen", "--mode", "bypass", "--data-dir", str(tmp_path / "d"))
        async with running_agent(*args, env=env) as (conn, _, _, client):
            sid = await start(conn, tmp_path)
            responses = [await conn.prompt(session_id=sid, prompt=[text_block(p)]) for p in prompts]
            chunks = updates_of(client, "agent_message_chunk")
    return responses, chunks, chat_bodies(server)


def marked(chunks: list[Any]) -> list[str]:
    """The texts the agent marked as its own."""
    return [u.content.text for u in chunks if u.field_meta]


async def run(
    tmp_path: Path, config: str, calls: list[tuple[str, str]]
) -> tuple[str, list[dict[str, Any]]]:
    replies = [tool_call(f"c{i}", name, args) for i, (name, args) in enumerate(calls)]
    [response], chunks, bodies = await turns(
        tmp_path, [*replies, text_reply("never asked")], config
    )
    assert response.stop_reason == "end_turn"
    [stop] = marked(chunks)
    return stop, bodies


async def test_one_file_named_two_ways_is_one_call(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("same\n")
    paths = ["f.txt", "./f.txt", str(tmp_path / "f.txt"), "./f.txt"]
    calls = [("read_file", json.dumps({"path": p})) for p in paths]
    stop, bodies = await run(tmp_path, "", calls)
    assert stop.startswith("Stopped: the same call read_file(") and "4 times" in stop
    assert len(bodies) == 4


async def test_a_run_time_in_the_output_does_not_make_it_new(tmp_path: Path) -> None:
    command = "python3 -c \"import time; print(f'1 failed in {time.time() % 1:.4f}s')\""
    calls = [("bash", json.dumps({"command": command}))] * 4
    stop, bodies = await run(tmp_path, "", calls)
    assert "was made 4 times" in stop
    assert len(bodies) == 4


async def test_the_same_failure_with_variations_is_stopped(tmp_path: Path) -> None:
    commands = [f"echo 'error: unrecognized arguments: --cov=src{i}' >&2; exit 4" for i in range(3)]
    calls = [("bash", json.dumps({"command": c})) for c in commands]
    stop, bodies = await run(tmp_path, "max_failed_calls = 3\n", calls)
    assert stop.startswith("Stopped: bash failed 3 times in a row")
    assert len(bodies) == 3
    results = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert "Note from acp-server" not in results[0]
    assert "2nd bash call in a row that failed with the same kind of error" in results[1]


async def test_a_silent_end_after_a_note_is_said_by_the_agent(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B, told its call repeated an earlier one, ended the turn with an empty
    message: the client saw two failed calls and nothing else. The agent says it, marked as its
    own, and the model never reads that message."""
    command = "echo 'not ready yet'; exit 1"
    replies = [tool_call(f"c{i}", "bash", json.dumps({"command": command})) for i in range(2)]
    responses, chunks, bodies = await turns(
        tmp_path, [*replies, text_reply(""), text_reply("fine")], prompts=("go", "again")
    )
    assert [r.stop_reason for r in responses] == ["end_turn", "end_turn"]
    assert marked(chunks) == [
        "The model ended its turn without an answer after acp-server noted that its "
        "calls were not making progress (see the last result). Send a new prompt to "
        "continue."
    ]
    assert len(bodies) == 4
    assert not any("without an answer" in json.dumps(m) for m in bodies[-1]["messages"])


async def test_an_answer_after_the_calls_gets_no_notice(tmp_path: Path) -> None:
    replies = [tool_call("c0", "bash", json.dumps({"command": "echo hi"}))]
    [response], chunks, _ = await turns(tmp_path, [*replies, text_reply("It printed hi.")])
    assert response.stop_reason == "end_turn"
    assert [u.content.text for u in chunks if not u.field_meta] == ["It printed hi."]
    assert marked(chunks) == []


async def test_a_note_in_an_earlier_step_is_not_blamed_for_a_silent_end(tmp_path: Path) -> None:
    """The notice names a no-progress note only when the last calls' results carried one."""
    failing = json.dumps({"command": "echo no; exit 1"})
    replies = [
        tool_call("c0", "bash", failing),
        tool_call("c1", "bash", failing),  # noted: a repeat, and a second failure in a row
        tool_call("c2", "bash", json.dumps({"command": "echo fine"})),
    ]
    [response], chunks, bodies = await turns(tmp_path, [*replies, text_reply("")])
    assert response.stop_reason == "end_turn"
    assert marked(chunks) == [
        "The model ended its turn without an answer. Send a new prompt to continue."
    ]
    second = [m["content"] for m in bodies[2]["messages"] if m["role"] == "tool"]
    assert "Note from acp-server" in second[-1]
