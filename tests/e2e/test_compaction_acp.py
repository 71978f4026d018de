"""Compaction over ACP, through the real process and the official SDK client, against a fake
OpenAI-compatible server that enforces a context window like llama.cpp
(tests/support/context_window_server.py): `/compact`, `compaction_update` for clients that
advertised `session.compaction` and a thought for the others, replay on `session/load`, the
next request starting from the summary after a restart, and a cancel during the summary
request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block

from acp_server.agent.conversation import SUMMARY_PREFIX
from tests.support.agent_process import running_agent
from tests.support.context_window_server import SUMMARY, ContextWindowServer

pytestmark = pytest.mark.anyio

COMPACTION_CAPS = {"session": {"compaction": {}}}
FILE_TEXT = "".join(f"line {n}: some content of the big file\n" for n in range(200))


def workspace(tmp_path: Path) -> tuple[Path, dict[str, str], list[str]]:
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "big.txt").write_text(FILE_TEXT)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "OPENAI_API_KEY": ""}
    args = ["--model", "openai:fake", "--data-dir", str(tmp_path / "data")]
    return cwd, env, args


async def initialize(conn: Any, capabilities: dict[str, Any]) -> None:
    await conn._conn.send_request(
        "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
    )


def updates_of(frames: Any, kind: str) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in frames.received
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == kind
    ]


def kinds(frames: Any) -> list[str]:
    return [
        f["params"]["update"]["sessionUpdate"]
        for f in frames.received
        if f.get("method") == "session/update"
    ]


async def test_compact_reports_to_a_capable_client_replays_on_load_and_the_next_request_uses_it(
    tmp_path: Path,
) -> None:
    cwd, env, args = workspace(tmp_path)
    with ContextWindowServer(n_ctx=100_000) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await initialize(conn, COMPACTION_CAPS)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            for n in range(3):
                done = await conn.prompt(session_id=sid, prompt=[text_block(f"read it {n}")])
                assert done.stop_reason == "end_turn"
            done = await conn.prompt(
                session_id=sid, prompt=[text_block("/compact keep the file name")]
            )
            assert done.stop_reason == "end_turn"
            live = updates_of(frames, "compaction_update")
            usage_after = kinds(frames)[kinds(frames).index("compaction_update") :]
        [asked] = server.chats("summary")
        assert "tools" not in asked.body or not asked.body["tools"]
        assert "keep the file name" in str(asked.body["messages"])
        assert [u["status"] for u in live] == ["in_progress", "completed"]
        assert live[1]["summary"] == [{"type": "text", "text": SUMMARY.format(file="big.txt")}]
        assert live[0]["compactionId"] == live[1]["compactionId"]
        assert "usage_update" in usage_after

        chats_before = len(server.chats())
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await initialize(conn, COMPACTION_CAPS)
            await conn.load_session(session_id=sid, cwd=str(cwd), mcp_servers=[])
            replayed = kinds(frames)
            done = await conn.prompt(session_id=sid, prompt=[text_block("read it again")])
            assert done.stop_reason == "end_turn"
        # Replayed at its place: after the three turns' tool calls, as a completed compaction.
        at = replayed.index("compaction_update")
        assert replayed.count("tool_call") == 3 and "tool_call" not in replayed[at:]
        [shown] = [u for u in updates_of(frames, "compaction_update")]
        assert shown["status"] == "completed" and shown["compactionId"] == live[1]["compactionId"]
        # The loaded session continues from the compacted context, not the full history.
        first = server.chats()[chats_before]
        messages = first.body["messages"]
        assert messages[0]["role"] == "system"
        assert str(messages[1]["content"]).startswith(SUMMARY_PREFIX[:40])
        assert "read it 0" not in str(messages)


async def test_a_client_without_the_capability_sees_one_thought_and_no_compaction_update(
    tmp_path: Path,
) -> None:
    cwd, env, args = workspace(tmp_path)
    with ContextWindowServer(n_ctx=100_000) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        async with running_agent(*args, env=env) as (conn, _, frames, client):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            for n in range(3):
                await conn.prompt(session_id=sid, prompt=[text_block(f"read it {n}")])
            done = await conn.prompt(session_id=sid, prompt=[text_block("/compact")])
            assert done.stop_reason == "end_turn"
    assert updates_of(frames, "compaction_update") == []
    thoughts = [
        u.content.text for _, u in client.updates if u.session_update == "agent_thought_chunk"
    ]
    assert len(thoughts) == 1 and thoughts[0].startswith("(Compacted the conversation")


async def test_a_cancel_during_the_summary_request_answers_cancelled_and_keeps_the_journal(
    tmp_path: Path,
) -> None:
    cwd, env, args = workspace(tmp_path)
    with ContextWindowServer(n_ctx=100_000, hold_summaries=True) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await initialize(conn, COMPACTION_CAPS)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            for n in range(3):
                await conn.prompt(session_id=sid, prompt=[text_block(f"read it {n}")])
            journal = tmp_path / "data" / "sessions" / f"{sid}.jsonl"
            before = journal.read_bytes()
            answers: list[Any] = []

            async def compact() -> None:
                answers.append(await conn.prompt(session_id=sid, prompt=[text_block("/compact")]))

            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(compact)
                    assert await anyio.to_thread.run_sync(server.held.wait, 15)
                    await conn.cancel(session_id=sid)
                released = await anyio.to_thread.run_sync(server.released.wait, 10)
            after = journal.read_bytes()
            statuses = [u["status"] for u in updates_of(frames, "compaction_update")]
    assert answers[0].stop_reason == "cancelled"
    assert released  # the summary request's connection was closed
    assert after == before
    assert statuses == ["in_progress", "cancelled"]


async def test_a_resumed_session_continues_from_the_compacted_context(tmp_path: Path) -> None:
    cwd, env, args = workspace(tmp_path)
    with ContextWindowServer(n_ctx=100_000) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        async with running_agent(*args, env=env) as (conn, _, _, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            for n in range(3):
                await conn.prompt(session_id=sid, prompt=[text_block(f"read it {n}")])
            await conn.prompt(session_id=sid, prompt=[text_block("/compact")])
        seen = len(server.chats())
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await conn.initialize(protocol_version=1)
            await conn._conn.send_request(
                "session/resume", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []}
            )
            done = await conn.prompt(session_id=sid, prompt=[text_block("read it again")])
            replayed = [f for f in frames.received if f.get("method") == "session/update"]
    assert done.stop_reason == "end_turn"
    messages = server.chats()[seen].body["messages"]
    assert str(messages[1]["content"]).startswith(SUMMARY_PREFIX[:40])
    assert "read it 0" not in str(messages)
    # Resume does not replay: no update of the earlier turns came back.
    assert all(f["params"]["update"]["sessionUpdate"] != "user_message_chunk" for f in replayed)


async def test_a_reloaded_deterministic_session_never_reuses_a_compaction_id(
    tmp_path: Path,
) -> None:
    """`--deterministic` numbers compactions per process; a session compacted, reloaded in a new
    process and compacted again must get a new id, or the replay repeats a `messageId`."""
    cwd, env, args = workspace(tmp_path)
    args = [*args, "--deterministic"]
    with ContextWindowServer(n_ctx=100_000) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        async with running_agent(*args, env=env) as (conn, _, _, _):
            await initialize(conn, COMPACTION_CAPS)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            for n in range(3):
                await conn.prompt(session_id=sid, prompt=[text_block(f"read it {n}")])
            done = await conn.prompt(session_id=sid, prompt=[text_block("/compact")])
            assert done.stop_reason == "end_turn"
        async with running_agent(*args, env=env) as (conn, _, _, _):
            await initialize(conn, COMPACTION_CAPS)
            await conn.load_session(session_id=sid, cwd=str(cwd), mcp_servers=[])
            for n in range(3, 6):
                await conn.prompt(session_id=sid, prompt=[text_block(f"read it {n}")])
            done = await conn.prompt(session_id=sid, prompt=[text_block("/compact")])
            assert done.stop_reason == "end_turn"
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await initialize(conn, COMPACTION_CAPS)
            await conn.load_session(session_id=sid, cwd=str(cwd), mcp_servers=[])
    compactions = [u["compactionId"] for u in updates_of(frames, "compaction_update")]
    assert len(compactions) == 2 and len(set(compactions)) == 2, compactions
    message_ids = [
        u["messageId"]
        for f in frames.received
        if f.get("method") == "session/update"
        for u in [f["params"]["update"]]
        if u.get("messageId") is not None
        and u["sessionUpdate"] in ("agent_message_chunk", "user_message_chunk")
    ]
    # Chunks of one message share its id; two messages never do.
    runs = [m for i, m in enumerate(message_ids) if i == 0 or message_ids[i - 1] != m]
    assert len(runs) == len(set(runs)), message_ids
