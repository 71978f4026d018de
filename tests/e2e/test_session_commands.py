"""Slash commands through the real process and the official SDK client: every opened session
(new, load, resume) learns them after its answer, and `/model NAME` switches the model like the
`model` config option."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block

from tests.support.agent_process import FrameLog, RecordingClient, running_agent

pytestmark = pytest.mark.anyio

ALL_COMMANDS = ["mode", "compact", "rewind", "model"]


def configured(tmp_path: Path) -> tuple[dict[str, str], str]:
    """A config file offering `echo` (the default) and a scripted model."""
    script = tmp_path / "scripted.json"
    script.write_text(json.dumps({"responses": [[{"text": "from the script"}]] * 3}))
    config = tmp_path / "config" / "acp-server" / "config.toml"
    config.parent.mkdir(parents=True)
    spec = f"script:{script}"
    config.write_text(f'default_model = "echo"\nmodels = ["echo", "{spec}"]\n')
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}, spec


async def commands_after_answer(
    frames: FrameLog, client: RecordingClient, method: str
) -> list[str]:
    """The command names of the `available_commands_update` that follows `method`'s answer,
    checking that it comes after the answer (clients drop updates of unknown sessions)."""
    with anyio.fail_after(10):
        while not any(u.session_update == "available_commands_update" for _, u in client.updates):
            await client.wait_for_updates(len(client.updates) + 1)
    request_id = next(f["id"] for f in frames.sent if f.get("method") == method)
    answer = next(i for i, f in enumerate(frames.received) if f.get("id") == request_id)
    [announced] = [
        i
        for i, f in enumerate(frames.received)
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "available_commands_update"
    ]
    assert announced > answer
    update = frames.received[announced]["params"]["update"]
    return [command["name"] for command in update["availableCommands"]]


async def test_load_and_resume_announce_the_commands_after_their_answer(tmp_path: Path) -> None:
    env, _ = configured(tmp_path)
    data = str(tmp_path / "data")
    async with running_agent("--data-dir", data, env=env) as (conn, _, frames, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        assert await commands_after_answer(frames, client, "session/new") == ALL_COMMANDS
        await conn.prompt(session_id=sid, prompt=[text_block("hello")])

    async with running_agent("--data-dir", data, env=env) as (conn, _, frames, client):
        await conn.initialize(protocol_version=1)
        await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        assert await commands_after_answer(frames, client, "session/load") == ALL_COMMANDS
        # The history came first, then the commands.
        kinds = [u.session_update for _, u in client.updates]
        assert kinds[0] == "user_message_chunk"
        assert kinds[-1] == "available_commands_update"

    async with running_agent("--data-dir", data, env=env) as (conn, _, frames, client):
        await conn.initialize(protocol_version=1)
        await conn.resume_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        assert await commands_after_answer(frames, client, "session/resume") == ALL_COMMANDS
        assert [u.session_update for _, u in client.updates] == ["available_commands_update"]


def shown(client: RecordingClient, kind: str) -> list[Any]:
    return [u for _, u in client.updates if u.session_update == kind]


async def test_model_slash_command_switches_like_the_config_option(tmp_path: Path) -> None:
    env, spec = configured(tmp_path)
    data = str(tmp_path / "data")
    async with running_agent("--data-dir", data, env=env) as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        switched = await conn.prompt(session_id=sid, prompt=[text_block(f"/model {spec}")])
        refused = await conn.prompt(session_id=sid, prompt=[text_block("/model openai:nope")])
        await conn.prompt(session_id=sid, prompt=[text_block("who answers?")])
    assert switched.stop_reason == refused.stop_reason == "end_turn"
    texts = [u.content.text for u in shown(client, "agent_message_chunk")]
    assert texts[0] == f"Model set to {spec}."
    assert texts[1].startswith("The model was not changed: model 'openai:nope' is not offered")
    assert texts[2:] == ["from the script"]  # the switch applied to the next prompt
    [update] = shown(client, "config_option_update")
    assert next(o for o in update.config_options if o.id == "model").current_value == spec
    assert shown(client, "tool_call") == []

    async with running_agent("--data-dir", data, env=env) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        loaded = await conn.load_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    model = next(o for o in loaded.config_options if o.id == "model")
    assert model.current_value == spec  # journaled like a config option switch
