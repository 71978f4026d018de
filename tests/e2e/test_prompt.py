"""session/prompt and session/cancel against the real process, via the official SDK client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError, text_block

from tests.support.agent_process import FrameLog, RecordingClient, running_agent
from tests.support.scripted_model import script

pytestmark = pytest.mark.anyio

STREAM_FOREVER = [{"text": "tick ", "repeat": 100_000, "delay_ms": 5}]
HANG_GUARD_S = 30.0
"""Only a server that never exits takes this long; it is no measure of speed."""


@asynccontextmanager
async def session_with(
    spec: str, tmp_path: Path
) -> AsyncIterator[tuple[Any, str, FrameLog, RecordingClient]]:
    async with running_agent("--model", spec) as (conn, _, frames, client):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        yield conn, session.session_id, frames, client


async def wait_for_updates(client: RecordingClient, count: int) -> None:
    await client.wait_for_updates(count)


def prompt_ids(frames: FrameLog) -> list[Any]:
    return [f["id"] for f in frames.sent if f.get("method") == "session/prompt"]


async def prompts_sent(frames: FrameLog, count: int) -> None:
    """Return once the client has written `count` session/prompt requests: the next one is
    then queued behind them on the one pipe to the agent (ordered by observation, not time)."""
    with anyio.fail_after(10):
        while len(prompt_ids(frames)) < count:
            await anyio.lowlevel.checkpoint()


def chunks(client: RecordingClient) -> list[Any]:
    """The message and thought chunks the client received, in order."""
    return [u for _, u in client.updates if u.session_update.endswith("_chunk")]


def updates_after_response(frames: FrameLog, request_id: Any) -> list[dict[str, Any]]:
    index = next(
        i for i, f in enumerate(frames.received) if f.get("id") == request_id and "method" not in f
    )
    return [f for f in frames.received[index + 1 :] if f.get("method") == "session/update"]


async def test_prompt_streams_chunks_then_answers_end_turn(tmp_path: Path) -> None:
    spec = script(tmp_path, [{"text": "Hello "}, {"thought": "hmm"}, {"text": "world"}])
    async with session_with(spec, tmp_path) as (conn, sid, _, client):
        response = await conn.prompt(session_id=sid, prompt=[text_block("hi")])
    assert response.stop_reason == "end_turn"
    kinds = [(u.session_update, u.content.text) for u in chunks(client)]
    assert kinds == [
        ("agent_message_chunk", "Hello "),
        ("agent_thought_chunk", "hmm"),
        ("agent_message_chunk", "world"),
    ]
    message_ids = {u.message_id for u in chunks(client)}
    assert len(message_ids) == 1 and None not in message_ids
    assert all(s == sid for s, _ in client.updates)
    titles = [u.title for _, u in client.updates if u.session_update == "session_info_update"]
    assert titles == ["hi"]  # derived from the first prompt, sent once


async def test_echo_model_streams_the_prompt_back_word_by_word(tmp_path: Path) -> None:
    async with session_with("echo", tmp_path) as (conn, sid, _, client):
        response = await conn.prompt(session_id=sid, prompt=[text_block("one two three")])
    assert response.stop_reason == "end_turn"
    assert [u.content.text for u in chunks(client)] == ["one ", "two ", "three"]


async def test_cancel_mid_stream_answers_cancelled_with_no_update_after(tmp_path: Path) -> None:
    async with session_with(script(tmp_path, STREAM_FOREVER), tmp_path) as (
        conn,
        sid,
        frames,
        client,
    ):
        responses: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                responses.append(await conn.prompt(session_id=sid, prompt=[text_block("go")]))

            tg.start_soon(ask)
            await wait_for_updates(client, 3)
            await conn.cancel(session_id=sid)
        assert responses[0].stop_reason == "cancelled"
    # The harness reads until the agent closes its output: anything written late is here.
    assert updates_after_response(frames, prompt_ids(frames)[0]) == []


async def test_idle_cancel_is_a_no_op_and_the_next_prompt_completes(tmp_path: Path) -> None:
    async with session_with(script(tmp_path, [{"text": "done"}]), tmp_path) as (conn, sid, _, _):
        await conn.cancel(session_id=sid)
        await conn.cancel(session_id=sid)
        response = await conn.prompt(session_id=sid, prompt=[text_block("hi")])
    assert response.stop_reason == "end_turn"


async def run_three_queued(
    conn: Any, sid: str, client: RecordingClient, frames: FrameLog, **cancel_meta: Any
) -> list[str]:
    results: dict[int, str] = {}
    async with anyio.create_task_group() as tg:
        for index in range(3):

            async def ask(index: int = index) -> None:
                response = await conn.prompt(session_id=sid, prompt=[text_block(f"p{index}")])
                results[index] = response.stop_reason

            tg.start_soon(ask)
            await prompts_sent(frames, index + 1)
        await wait_for_updates(client, 2)
        await conn.cancel(session_id=sid, **cancel_meta)
    return [results[i] for i in range(3)]


async def test_cancel_with_three_queued_prompts_answers_all_cancelled(tmp_path: Path) -> None:
    spec = script(tmp_path, STREAM_FOREVER)
    async with session_with(spec, tmp_path) as (conn, sid, frames, client):
        assert await run_three_queued(conn, sid, client, frames) == ["cancelled"] * 3


async def test_keep_inbox_cancel_aborts_the_first_and_runs_the_rest_in_order(
    tmp_path: Path,
) -> None:
    spec = script(tmp_path, STREAM_FOREVER, [{"text": "second"}], [{"text": "third"}])
    async with session_with(spec, tmp_path) as (conn, sid, frames, client):
        keep = {"acp-server": {"keepInbox": True}}
        stops = await run_three_queued(conn, sid, client, frames, **keep)
    assert stops == ["cancelled", "end_turn", "end_turn"]
    texts = [u.content.text for u in chunks(client) if u.content.text != "tick "]
    assert texts == ["second", "third"]
    answered = [f["id"] for f in frames.received if "result" in f and "stopReason" in f["result"]]
    assert answered == prompt_ids(frames)


async def test_cancel_request_for_a_queued_prompt_drops_only_that_prompt(tmp_path: Path) -> None:
    spec = script(tmp_path, [{"text": "a", "repeat": 1, "delay_ms": 300}], [{"text": "c"}])
    async with session_with(spec, tmp_path) as (conn, sid, frames, _):
        results: dict[int, str] = {}
        async with anyio.create_task_group() as tg:
            for index in range(3):

                async def ask(index: int = index) -> None:
                    response = await conn.prompt(session_id=sid, prompt=[text_block(f"p{index}")])
                    results[index] = response.stop_reason

                tg.start_soon(ask)
                await prompts_sent(frames, index + 1)
            second = prompt_ids(frames)[1]
            await conn._conn.send_notification("$/cancel_request", {"requestId": second})
    assert results == {0: "end_turn", 1: "cancelled", 2: "end_turn"}


async def test_cancel_request_for_the_running_prompt_keeps_the_queue(tmp_path: Path) -> None:
    spec = script(tmp_path, STREAM_FOREVER, [{"text": "next"}])
    async with session_with(spec, tmp_path) as (conn, sid, frames, client):
        results: dict[int, str] = {}
        async with anyio.create_task_group() as tg:
            for index in range(2):

                async def ask(index: int = index) -> None:
                    response = await conn.prompt(session_id=sid, prompt=[text_block(f"p{index}")])
                    results[index] = response.stop_reason

                tg.start_soon(ask)
                await prompts_sent(frames, index + 1)
            await wait_for_updates(client, 2)
            first = prompt_ids(frames)[0]
            await conn._conn.send_notification("$/cancel_request", {"requestId": first})
    assert results == {0: "cancelled", 1: "end_turn"}


@pytest.mark.parametrize(("finish", "stop"), [("max_tokens", "max_tokens"), ("refusal", "refusal")])
async def test_model_finish_reasons_map_to_stop_reasons(
    tmp_path: Path, finish: str, stop: str
) -> None:
    spec = script(tmp_path, [{"text": "partial"}, {"finish": finish}])
    async with session_with(spec, tmp_path) as (conn, sid, _, _):
        response = await conn.prompt(session_id=sid, prompt=[text_block("hi")])
    assert response.stop_reason == stop


async def test_step_limit_answers_max_turn_requests(tmp_path: Path) -> None:
    # `max_steps = 3` in the config file: three identical calls stay under the repeat limit.
    config = tmp_path / "config" / "acp-server" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("max_steps = 3\n")
    loop_forever = [{"tool_call": {"name": "nothing", "arguments": {}}}]
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    spec = script(tmp_path, loop_forever)
    async with running_agent("--model", spec, env=env) as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("hi")])
    assert response.stop_reason == "max_turn_requests"
    assert len([u for _, u in client.updates if u.session_update == "tool_call"]) == 3
    statuses = [u.status for _, u in client.updates if u.session_update == "tool_call_update"]
    assert statuses and set(statuses) == {"failed"}  # an unknown tool fails; the turn goes on


async def test_model_error_answers_a_json_rpc_error_with_its_message(tmp_path: Path) -> None:
    spec = script(tmp_path, [{"error": "the model is overloaded"}])
    async with session_with(spec, tmp_path) as (conn, sid, _, _):
        with pytest.raises(RequestError) as caught:
            await conn.prompt(session_id=sid, prompt=[text_block("hi")])
        # The session lives on.
        with pytest.raises(RequestError):
            await conn.prompt(session_id=sid, prompt=[text_block("again")])
    assert "the model is overloaded" in str(caught.value)


async def test_prompt_for_an_unknown_session_is_an_error(tmp_path: Path) -> None:
    async with session_with("echo", tmp_path) as (conn, _, _, _):
        with pytest.raises(RequestError) as caught:
            await conn.prompt(session_id="sess_nope", prompt=[text_block("hi")])
    assert caught.value.code == -32002


async def test_cancel_for_an_unknown_session_is_ignored(tmp_path: Path) -> None:
    async with session_with("echo", tmp_path) as (conn, sid, _, _):
        await conn.cancel(session_id="sess_nope")
        response = await conn.prompt(session_id=sid, prompt=[text_block("still fine")])
    assert response.stop_reason == "end_turn"


async def test_sigterm_during_a_turn_answers_cancelled_and_exits(tmp_path: Path) -> None:
    async with running_agent("--model", script(tmp_path, STREAM_FOREVER)) as (
        conn,
        process,
        _,
        client,
    ):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        responses: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                responses.append(await conn.prompt(session_id=sid, prompt=[text_block("go")]))

            tg.start_soon(ask)
            await wait_for_updates(client, 2)
            process.terminate()
        with anyio.fail_after(HANG_GUARD_S):  # a guard against a hang, not a speed bound
            assert await process.wait() == 0
    assert responses[0].stop_reason == "cancelled"
