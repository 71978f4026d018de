"""Model configuration through the real process: the config file, the `model` config option
(switching applies from the next request and survives a reload), and `usage_update`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.support.agent_process import SERVER, running_agent


def configured(tmp_path: Path) -> tuple[dict[str, str], str]:
    script = tmp_path / "scripted.json"
    script.write_text(json.dumps({"responses": [[{"text": "from the script"}]]}))
    config = tmp_path / "config" / "acp-server" / "config.toml"
    config.parent.mkdir(parents=True)
    spec = f"script:{script}"
    config.write_text(f'default_model = "echo"\nmodels = ["echo", "{spec}"]\n')
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}, spec


def texts(client: object) -> list[str]:
    return [u.content.text for _, u in client.updates if u.session_update == "agent_message_chunk"]  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_offered_models_are_a_model_config_option_and_switching_applies_next(
    tmp_path: Path,
) -> None:
    env, spec = configured(tmp_path)
    data = str(tmp_path / "data")
    async with running_agent("--data-dir", data, env=env) as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        model_option = next(o for o in session.config_options if o.id == "model")
        assert model_option.category == "model"
        assert model_option.current_value == "echo"
        assert [o.value for o in model_option.options] == ["echo", spec]
        await conn.prompt(session_id=session.session_id, prompt=[text_block("echo me")])
        changed = await conn.set_config_option(
            config_id="model", session_id=session.session_id, value=spec
        )
        assert next(o for o in changed.config_options if o.id == "model").current_value == spec
        await conn.prompt(session_id=session.session_id, prompt=[text_block("ignored")])
        with pytest.raises(RequestError) as caught:
            await conn.set_config_option(
                config_id="model", session_id=session.session_id, value="openai:not-offered"
            )
    assert texts(client) == ["echo ", "me", "from the script"]
    assert caught.value.code == -32602 and "not offered" in str(caught.value.data)

    async with running_agent("--data-dir", data, env=env) as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        loaded = await conn.load_session(
            session_id=session.session_id, cwd=str(tmp_path), mcp_servers=[]
        )
        option = next(o for o in loaded.config_options if o.id == "model")
        assert option.current_value == spec  # the choice survived the restart


@pytest.mark.anyio
async def test_usage_update_follows_each_turn(tmp_path: Path) -> None:
    async with running_agent("--model", "echo") as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("count these words")])
    usage = [u for _, u in client.updates if u.session_update == "usage_update"]
    assert len(usage) == 1
    assert usage[0].size == 100_000 and usage[0].used > 0


def test_a_broken_config_file_stops_the_server_with_its_path(tmp_path: Path) -> None:
    config = tmp_path / "acp-server" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("models = [unterminated\n")
    proc = subprocess.run(
        [SERVER],
        env={"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        input=b"",
        capture_output=True,
        timeout=10,
        check=False,
    )
    assert proc.returncode == 2
    assert str(config).encode() in proc.stderr
