"""Durable sessions through the real process and the official SDK client: load with replay,
resume, list, close, delete, and what happens with a broken or busy journal."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError, text_block

from tests.support.agent_process import FrameLog, RecordingClient, running_agent
from tests.support.raw_client import new_session, raw_agent, text
from tests.support.scripted_model import script
from tests.support.tool_client import call

pytestmark = pytest.mark.anyio

SCRIPT = {
    "responses": [
        [{"text": "let me look "}, {"tool_call": {"name": "lookup", "arguments": {"q": 1}}}],
        [{"thought": "nothing found"}, {"text": "done"}],
    ]
}


@asynccontextmanager
async def agent_in(
    data_dir: Path, tmp_path: Path
) -> AsyncIterator[tuple[Any, FrameLog, RecordingClient]]:
    model = tmp_path / "model.json"
    if not model.exists():
        model.write_text(json.dumps(SCRIPT))
    async with running_agent("--model", f"script:{model}", "--data-dir", str(data_dir)) as (
        conn,
        _,
        frames,
        client,
    ):
        await conn.initialize(protocol_version=1)
        yield conn, frames, client


async def delete_session(conn: Any, session_id: str) -> Any:
    # The SDK client (schema 1.19) predates session/delete; send it through its connection.
    return await conn._conn.send_request("session/delete", {"sessionId": session_id})


def kinds(updates: list[Any]) -> list[tuple[str, str]]:
    shown = []
    for _, update in updates:
        kind = update.session_update
        if kind.endswith("_chunk"):
            shown.append((kind, update.content.text))
        elif kind == "tool_call":
            shown.append((kind, f"{update.title}:{update.status}"))
        elif kind == "tool_call_update":
            shown.append((kind, update.status))
    return shown


async def test_load_in_a_new_process_replays_everything_before_answering(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with agent_in(data, tmp_path) as (conn, _, live):
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        first = await conn.prompt(session_id=sid, prompt=[text_block("find the bug")])
        assert first.stop_reason == "end_turn"
    live_view = kinds(live.updates)

    async with agent_in(data, tmp_path) as (conn, frames, replayed):
        await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        load_id = next(f["id"] for f in frames.sent if f.get("method") == "session/load")
        answer_at = next(
            i for i, f in enumerate(frames.received) if f.get("id") == load_id and "result" in f
        )
        answer = frames.received[answer_at]["result"]
        assert answer["modes"]["currentModeId"] == "default"
        assert [o["id"] for o in answer["configOptions"]] == ["mode", "model"]
        between = frames.received[1:answer_at]  # after the initialize answer
        assert between and all(f.get("method") == "session/update" for f in between)
        history = kinds(replayed.updates)
        assert history[0] == ("user_message_chunk", "find the bug")
        # Everything the client saw live comes back, in order (the title update aside).
        assert history[1:] == live_view
        again = await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
        assert again.stop_reason == "end_turn"

    async with agent_in(data, tmp_path) as (conn, _, third):
        await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    prompts = [text for kind, text in kinds(third.updates) if kind == "user_message_chunk"]
    assert prompts == ["find the bug", "and now?"]


async def test_replayed_tool_calls_keep_title_kind_input_and_final_status(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with agent_in(data, tmp_path) as (conn, _, _):
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("go")])
    async with agent_in(data, tmp_path) as (conn, _, replayed):
        await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    calls = [u for _, u in replayed.updates if u.session_update == "tool_call"]
    results = [u for _, u in replayed.updates if u.session_update == "tool_call_update"]
    assert [(c.title, c.kind, c.raw_input) for c in calls] == [("lookup", "other", {"q": 1})]
    assert [(r.tool_call_id, r.status) for r in results] == [(calls[0].tool_call_id, "failed")]
    assert "unknown tool" in results[0].content[0].content.text


async def test_resume_answers_without_replay_and_the_session_continues(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with agent_in(data, tmp_path) as (conn, _, _):
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("one")])
    async with agent_in(data, tmp_path) as (conn, _, client):
        await conn.resume_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        # No history comes back (the slash commands may follow the answer).
        assert kinds(client.updates) == []
        response = await conn.prompt(session_id=sid, prompt=[text_block("two")])
    assert response.stop_reason == "end_turn"


async def test_list_filters_by_cwd_with_titles_and_update_times(tmp_path: Path) -> None:
    data = tmp_path / "data"
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    async with agent_in(data, tmp_path) as (conn, _, _):
        here = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=here, prompt=[text_block("Fix the parser\nplease")])
        there = (await conn.new_session(cwd=str(elsewhere), mcp_servers=[])).session_id
        everything = await conn.list_sessions()
        mine = await conn.list_sessions(cwd=str(tmp_path))
        nowhere = await conn.list_sessions(cwd="/no/such/dir")
    assert {s.session_id for s in everything.sessions} >= {here, there}
    assert [s.session_id for s in mine.sessions] == [here]
    assert mine.sessions[0].title == "Fix the parser"
    assert mine.sessions[0].updated_at
    assert nowhere.sessions == []


async def test_list_pages_with_an_opaque_cursor_and_refuses_a_bad_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with agent_in(data, tmp_path) as (conn, _, _):
        created = {
            (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            for _ in range(55)
        }
        first = await conn.list_sessions(cwd=str(tmp_path))
        assert len(first.sessions) == 50 and first.next_cursor
        second = await conn.list_sessions(cwd=str(tmp_path), cursor=first.next_cursor)
        with pytest.raises(RequestError) as caught:
            await conn.list_sessions(cursor="garbage")
    assert second.next_cursor is None
    assert {s.session_id for s in first.sessions + second.sessions} == created
    assert caught.value.code == -32602


async def test_close_cancels_the_running_turn_and_frees_the_session(tmp_path: Path) -> None:
    model = tmp_path / "slow.json"
    model.write_text(json.dumps({"responses": [[{"text": "t ", "repeat": 10000, "delay_ms": 5}]]}))
    async with running_agent("--model", f"script:{model}", "--data-dir", str(tmp_path / "d")) as (
        conn,
        _,
        _,
        client,
    ):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        stops: list[str] = []
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                stops.append(
                    (await conn.prompt(session_id=sid, prompt=[text_block("go")])).stop_reason
                )

            tg.start_soon(ask)
            await client.wait_for_updates(3)
            await conn.close_session(session_id=sid)
        with pytest.raises(RequestError) as after:
            await conn.prompt(session_id=sid, prompt=[text_block("again")])
        with pytest.raises(RequestError) as unknown:
            await conn.close_session(session_id="sess_never")
        # Closed, not deleted: it loads again, with the closed turn in it.
        before_load = len(client.updates)
        live = "".join(text for kind, text in kinds(client.updates) if kind.startswith("agent"))
        await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        replayed = kinds(client.updates[before_load:])
    assert stops == ["cancelled"]
    assert after.value.code == -32002
    assert unknown.value.code == -32002
    assert live.startswith("t ")
    assert replayed == [("user_message_chunk", "go"), ("agent_message_chunk", live)]
    journal = tmp_path / "d" / "sessions" / f"{sid}.jsonl"
    records = [json.loads(line) for line in journal.read_bytes().splitlines()[1:]]
    ends = [r for r in records if r["type"] == "turn/end"]
    assert len(ends) == 1 and ends[0]["outcome"] == {"kind": "disposed"}  # closed, not repaired


async def test_delete_is_idempotent_and_a_deleted_session_cannot_load(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with agent_in(data, tmp_path) as (conn, _, _):
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        assert await delete_session(conn, sid) == {}
        assert await delete_session(conn, sid) == {}
        assert await delete_session(conn, "sess_never_existed") == {}
        assert await delete_session(conn, "../../etc/passwd") == {}
        with pytest.raises(RequestError) as caught:
            await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        listed = await conn.list_sessions()
    assert caught.value.code == -32002
    assert sid not in {s.session_id for s in listed.sessions}


async def test_loading_an_unknown_session_is_an_error_never_success(tmp_path: Path) -> None:
    async with agent_in(tmp_path / "data", tmp_path) as (conn, _, client):
        for session_id in ("sess_unknown", "../escape", ""):
            with pytest.raises(RequestError) as caught:
                await conn.load_session(session_id=session_id, cwd=str(tmp_path), mcp_servers=[])
            assert caught.value.code == -32002
        with pytest.raises(RequestError):
            await conn.resume_session(session_id="sess_unknown", cwd=str(tmp_path), mcp_servers=[])
    assert client.updates == []


async def test_a_legacy_reason_bearing_aborted_record_fails_the_load_naming_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with agent_in(data, tmp_path) as (conn, _, _):
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])
    journal = data / "sessions" / f"{sid}.jsonl"
    lines = journal.read_text().splitlines()
    end = next(i for i, line in enumerate(lines) if '"turn/end"' in line)
    lines[end] = lines[end].replace('{"kind":"completed"}', '{"kind":"aborted","reason":"user"}')
    journal.write_text("\n".join(lines) + "\n")
    async with agent_in(data, tmp_path) as (conn, _, client):
        with pytest.raises(RequestError) as caught:
            await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    message = str(caught.value.data)
    assert caught.value.code == -32002
    assert str(journal) in message and f"record {end}" in message and "reason" in message
    assert client.updates == []  # never half-loaded


async def test_a_session_open_in_another_process_is_refused_clearly(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with agent_in(data, tmp_path) as (first, _, _):
        sid = (await first.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        async with agent_in(data, tmp_path) as (second, _, _):
            with pytest.raises(RequestError) as caught:
                await second.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    assert caught.value.code == -32002
    assert "another acp-server process" in str(caught.value.data)


async def test_a_cwd_that_is_missing_or_a_file_is_refused_and_nothing_is_created(
    tmp_path: Path,
) -> None:
    # Every method that opens a session in a cwd: new, load, resume and fork. Accepted before.
    data = tmp_path / "data"
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a directory")
    bad_cwds = (str(tmp_path / "missing"), str(a_file), str(a_file / "below"))
    async with agent_in(data, tmp_path) as (conn, _, _):
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])
        await conn.close_session(session_id=sid)
        before = sorted(p.relative_to(data) for p in data.rglob("*"))
        codes = []
        for cwd in bad_cwds:
            for call in (
                lambda cwd: conn.new_session(cwd=cwd, mcp_servers=[]),
                lambda cwd: conn.load_session(session_id=sid, cwd=cwd, mcp_servers=[]),
                lambda cwd: conn.resume_session(session_id=sid, cwd=cwd, mcp_servers=[]),
                lambda cwd: conn.fork_session(session_id=sid, cwd=cwd, mcp_servers=[]),
            ):
                with pytest.raises(RequestError) as caught:
                    await call(cwd)
                codes.append(caught.value.code)
                assert cwd in str(caught.value.data)
        after = sorted(p.relative_to(data) for p in data.rglob("*"))
        listed = await conn.list_sessions()
    assert codes == [-32602] * 12
    assert after == before  # no journal, lock or directory was created
    assert [s.session_id for s in listed.sessions] == [sid]
    assert not (tmp_path / "missing").exists()


async def test_resume_and_load_open_a_journaled_session_in_another_cwd_never_an_open_one(
    tmp_path: Path,
) -> None:
    """v1 `session/load` and `resume` alike: a session open in this agent keeps its cwd, so
    another is -32602 naming both; closed, it opens in the cwd asked for and works there (the
    journal keeps the first; v2's resume refuses that too: tests/e2e/test_v2_sessions.py)."""
    ws, other, data = tmp_path / "ws", tmp_path / "other", tmp_path / "data"
    for path in (ws, other):
        path.mkdir()
        (path / f"only-in-{path.name}.txt").write_text("x")
    spec = script(tmp_path, call("list_dir"), [{"text": "listed"}])
    async with raw_agent("--model", spec, "--data-dir", str(data)) as client:
        sid = await new_session(client, str(ws))
        for method in ("session/resume", "session/load"):
            moved = {"sessionId": sid, "cwd": str(other), "mcpServers": []}
            refused = await client.request(method, moved)
            assert refused["error"]["code"] == -32602, method
            assert str(ws) in refused["error"]["data"] and str(other) in refused["error"]["data"]
        assert await client.call("session/close", {"sessionId": sid}) == {}
        moved = {"sessionId": sid, "cwd": str(other), "mcpServers": []}
        await client.call("session/resume", moved)
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("list")})
    [listed] = [
        u
        for u in client.updates(sid)
        if u["sessionUpdate"] == "tool_call_update" and u.get("content")
    ]
    assert "only-in-other.txt" in listed["content"][0]["content"]["text"]
