"""`session/fork` through the real process and the official SDK client: the fork holds its
source's history up to the last ended turn, its journal names its origin, it replays with
`session/load`, goes on independently, and is advertised; every fork frame is checked against
the unstable schema that defines it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from jsonschema import Draft202012Validator

from tests.support.agent_process import FrameLog, RecordingClient, running_agent

pytestmark = pytest.mark.anyio

UNSTABLE_SCHEMA = Path(__file__).resolve().parent.parent / "data" / "acp" / "schema.unstable.json"


def unstable_errors(ref: str, value: Any) -> list[str]:
    schema = json.loads(UNSTABLE_SCHEMA.read_text())
    validator = Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{ref}"}
    )
    return [error.message for error in validator.iter_errors(value)]


def fork_frames(frames: FrameLog) -> list[dict[str, Any]]:
    """The fork requests sent and their answers, each checked against the unstable schema."""
    checked = []
    for sent in frames.sent:
        if sent.get("method") != "session/fork":
            continue
        assert not unstable_errors("ForkSessionRequest", sent["params"])
        [answer] = [f for f in frames.received if f.get("id") == sent["id"]]
        if "result" in answer:
            assert not unstable_errors("ForkSessionResponse", answer["result"])
        checked.append(answer)
    return checked


def user_prompts(client: RecordingClient, session_id: str) -> list[str]:
    return [
        u.content.text
        for sid, u in client.updates
        if sid == session_id and u.session_update == "user_message_chunk"
    ]


def header(data: Path, session_id: str) -> dict[str, Any]:
    journal = data / "sessions" / f"{session_id}.jsonl"
    return json.loads(journal.read_text().splitlines()[0])  # type: ignore[no-any-return]


async def test_a_fork_copies_the_history_names_its_origin_and_replays(tmp_path: Path) -> None:
    data = tmp_path / "data"
    args = ("--model", "echo", "--data-dir", str(data))
    async with running_agent(*args) as (conn, _, frames, client):
        await conn.initialize(protocol_version=1)
        assert (
            frames.received[0]["result"]["agentCapabilities"]["sessionCapabilities"]["fork"] == {}
        )
        source = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=source, prompt=[text_block("first question")])
        await conn.prompt(session_id=source, prompt=[text_block("second question")])
        forked = await conn.fork_session(session_id=source, cwd=str(tmp_path), mcp_servers=[])
        fork = forked.session_id
        assert fork != source
        assert forked.modes is not None and forked.modes.current_mode_id == "default"
        # Both go on independently.
        await conn.prompt(session_id=fork, prompt=[text_block("only in the fork")])
        await conn.prompt(session_id=source, prompt=[text_block("only in the source")])
        [answer] = fork_frames(frames)
        assert answer["result"]["sessionId"] == fork
        listed = await conn.list_sessions()
    assert {s.session_id for s in listed.sessions} == {source, fork}

    source_header = header(data, source)
    fork_header = header(data, fork)
    assert fork_header["forked_from"] == source
    turn_ends = [
        json.loads(line)
        for line in (data / "sessions" / f"{source}.jsonl").read_text().splitlines()[1:]
        if json.loads(line)["type"] == "turn/end"
    ]
    # Forked at the source's second turn: the last that had ended when the fork was made.
    assert fork_header["forked_at_turn"] == turn_ends[1]["turn_id"]
    assert source_header["forked_from"] is None

    async with running_agent(*args) as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        await conn.load_session(session_id=fork, cwd=str(tmp_path), mcp_servers=[])
        await conn.load_session(session_id=source, cwd=str(tmp_path), mcp_servers=[])
    assert user_prompts(client, fork) == ["first question", "second question", "only in the fork"]
    assert user_prompts(client, source) == [
        "first question",
        "second question",
        "only in the source",
    ]


async def test_a_session_on_disk_forks_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    args = ("--model", "echo", "--data-dir", str(data))
    async with running_agent(*args) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        source = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=source, prompt=[text_block("kept on disk")])

    async with running_agent(*args) as (conn, _, frames, client):
        await conn.initialize(protocol_version=1)
        fork = (
            await conn.fork_session(session_id=source, cwd=str(tmp_path), mcp_servers=[])
        ).session_id
        await conn.prompt(session_id=fork, prompt=[text_block("next")])
        with pytest.raises(RequestError) as caught:
            await conn.fork_session(session_id="sess_nope", cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(RequestError) as relative:
            await conn.fork_session(session_id=source, cwd="rel", mcp_servers=[])
        # The source was only read: it can still be loaded here.
        await conn.load_session(session_id=source, cwd=str(tmp_path), mcp_servers=[])
        fork_frames(frames)
    assert caught.value.code == -32002
    assert relative.value.code == -32602
    assert user_prompts(client, source) == ["kept on disk"]
    # The fork's answer was followed by its slash commands, like any opened session.
    commands = [
        u
        for sid, u in client.updates
        if sid == fork and u.session_update == "available_commands_update"
    ]
    assert [c.name for c in commands[0].available_commands] == [
        "mode",
        "compact",
        "rewind",
        "model",
    ]
    assert header(data, fork)["forked_from"] == source
