"""Slash commands through the real process and the official SDK client: every opened session
learns them, a loaded one before its answer (after its history: nothing of the session follows
the answer), a new or resumed one right after it; and `/model NAME` switches the model like the
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


def commands_update(frames: FrameLog) -> tuple[int, list[str]]:
    """Where the one `available_commands_update` received is, and its command names."""
    [announced] = [
        i
        for i, f in enumerate(frames.received)
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "available_commands_update"
    ]
    update = frames.received[announced]["params"]["update"]
    return announced, [command["name"] for command in update["availableCommands"]]


def answer_of(frames: FrameLog, method: str) -> int:
    request_id = next(f["id"] for f in frames.sent if f.get("method") == method)
    return next(i for i, f in enumerate(frames.received) if f.get("id") == request_id)


async def commands_after_answer(
    frames: FrameLog, client: RecordingClient, method: str
) -> list[str]:
    """The command names of the `available_commands_update` that follows `method`'s answer,
    checking that it comes after the answer (clients drop updates of unknown sessions)."""
    with anyio.fail_after(10):
        while not any(u.session_update == "available_commands_update" for _, u in client.updates):
            await client.wait_for_updates(len(client.updates) + 1)
    announced, names = commands_update(frames)
    assert announced > answer_of(frames, method)
    return names


async def test_load_announces_the_commands_before_its_answer_new_and_resume_after(
    tmp_path: Path,
) -> None:
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
    # Read once the process has ended: every frame it sent is in, and none came after the
    # answer (the official test kit's ACP-LOAD-002).
    answer = answer_of(frames, "session/load")
    announced, names = commands_update(frames)
    assert names == ALL_COMMANDS
    assert announced == answer - 1  # the history came first, then the commands
    assert frames.received[1:answer] and all(
        f.get("method") == "session/update" for f in frames.received[1:answer]
    )
    assert frames.received[answer + 1 :] == []
    assert client.updates[0][1].session_update == "user_message_chunk"

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


async def test_mode_and_model_alone_show_the_current_value_and_the_choices(
    tmp_path: Path,
) -> None:
    env, spec = configured(tmp_path)
    async with running_agent("--data-dir", str(tmp_path / "data"), env=env) as (
        conn,
        _,
        _,
        client,
    ):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        answers = [
            await conn.prompt(session_id=sid, prompt=[text_block(text)])
            for text in ("/mode", "/mode read_only", "/mode ", "/model")
        ]
    assert {a.stop_reason for a in answers} == {"end_turn"}
    mode, _, mode_after, model = [u.content.text for u in shown(client, "agent_message_chunk")]
    assert mode.splitlines()[0] == "The mode is default. Switch with /mode NAME:"
    assert "- accept_edits: Edit files in the workspace freely; ask before commands." in mode
    assert [line[2:].split(":")[0] for line in mode.splitlines()[1:]][-1] == "bypass"
    assert mode_after.splitlines()[0] == "The mode is read_only. Switch with /mode NAME:"
    assert model.splitlines() == [
        "The model is echo. Switch with /model NAME:",
        "- echo",
        f"- {spec}",
    ]
    assert shown(client, "tool_call") == []  # answered by the agent, the model was not asked
