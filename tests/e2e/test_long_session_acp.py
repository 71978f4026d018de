"""A long session against a server with a small context window, through the real process and
the official SDK client (issue 13): every prompt ends `end_turn`, the agent compacts before the
server would refuse, a refusal triggers a compaction and one retry, and after a restart and
`session/load` (which replays the compactions) the session keeps working within the window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.support.agent_process import running_agent
from tests.support.context_window_server import ContextWindowServer

pytestmark = pytest.mark.anyio

FILE_TEXT = "".join(f"{n:4d}: a line of the file that is read every turn\n" for n in range(40))


def workspace(
    tmp_path: Path, server: ContextWindowServer
) -> tuple[Path, dict[str, str], list[str]]:
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    (cwd / server.file).write_text(FILE_TEXT)
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "OPENAI_API_KEY": "",
        "OPENAI_BASE_URL": server.base_url,
    }
    return cwd, env, ["--model", "openai:fake", "--data-dir", str(tmp_path / "data")]


def journal_records(tmp_path: Path, session_id: str) -> list[dict[str, Any]]:
    lines = (tmp_path / "data" / "sessions" / f"{session_id}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[1:]]  # the first line is the header


async def test_forty_prompts_compact_within_the_window_and_continue_after_a_reload(
    tmp_path: Path,
) -> None:
    with ContextWindowServer(n_ctx=4_000) as server:
        cwd, env, args = workspace(tmp_path, server)
        async with running_agent(*args, env=env) as (conn, _, _, _):
            await conn._conn.send_request(
                "initialize",
                {"protocolVersion": 1, "clientCapabilities": {"session": {"compaction": {}}}},
            )
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            reasons = [
                (
                    await conn.prompt(session_id=sid, prompt=[text_block(f"read it, {n}")])
                ).stop_reason
                for n in range(40)
            ]
        assert reasons == ["end_turn"] * 40
        compactions = [
            r for r in journal_records(tmp_path, sid) if r["type"] == "context/compaction"
        ]
        assert compactions, "a 40-prompt session in a small window compacts"
        assert server.chats("exceeded") == []  # compacted before the server had to refuse
        assert max(c.tokens for c in server.chats()) <= server.n_ctx

        seen = len(server.chats())
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await conn._conn.send_request(
                "initialize",
                {"protocolVersion": 1, "clientCapabilities": {"session": {"compaction": {}}}},
            )
            await conn.load_session(session_id=sid, cwd=str(cwd), mcp_servers=[])
            replayed = [
                f["params"]["update"]
                for f in frames.received
                if f.get("method") == "session/update"
                and f["params"]["update"]["sessionUpdate"] == "compaction_update"
            ]
            more = [
                (await conn.prompt(session_id=sid, prompt=[text_block(f"again, {n}")])).stop_reason
                for n in range(5)
            ]
        assert [u["compactionId"] for u in replayed] == [c["compaction_id"] for c in compactions]
        assert more == ["end_turn"] * 5
        after = server.chats()[seen:]
        assert after and max(c.tokens for c in after) <= server.n_ctx
        # The first request after the reload is no larger than a compacted one: the loaded
        # session did not fall back to the whole history.
        assert after[0].tokens <= server.n_ctx


async def test_a_refusal_compacts_and_retries_in_the_same_turn(tmp_path: Path) -> None:
    # The server counts more than the agent estimates and reports no usage to learn from, so it
    # refuses before the agent thinks it must compact: the refusal itself triggers the
    # compaction and one retry.
    with ContextWindowServer(n_ctx=6_000, bytes_per_token=2, report_usage=False) as server:
        cwd, env, args = workspace(tmp_path, server)
        async with running_agent(*args, env=env) as (conn, _, _, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            reasons = [
                (
                    await conn.prompt(session_id=sid, prompt=[text_block(f"read it, {n}")])
                ).stop_reason
                for n in range(12)
            ]
    assert reasons == ["end_turn"] * 12
    refused = server.chats("exceeded")
    assert refused, "the server refused at least once"
    assert any(r["type"] == "context/compaction" for r in journal_records(tmp_path, sid))


async def test_a_request_that_never_fits_fails_naming_the_window_and_its_size(
    tmp_path: Path,
) -> None:
    with ContextWindowServer(n_ctx=4_500) as server:
        cwd, env, args = workspace(tmp_path, server)
        async with running_agent(*args, env=env) as (conn, _, _, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            with pytest.raises(RequestError) as caught:
                await conn.prompt(session_id=sid, prompt=[text_block("x " * 20_000)])
            # The session stays usable.
            done = await conn.prompt(session_id=sid, prompt=[text_block("read it")])
    message = str(caught.value)
    assert "4500" in message.replace(",", "") and "context window" in message
    assert done.stop_reason == "end_turn"
