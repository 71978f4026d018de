"""initialize, authenticate and session/new against the real process, via the official SDK."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AuthCapabilities,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
)

from tests.support.agent_process import running_agent

pytestmark = pytest.mark.anyio


async def test_initialize_answers_version_1_and_describes_the_agent() -> None:
    async with running_agent() as (conn, _, frames, _):
        response = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=True,
            ),
            client_info=Implementation(name="pytest", version="1"),
        )
    assert response.protocol_version == 1
    assert response.agent_info is not None and response.agent_info.name == "acp-server"
    # Exactly what works is advertised.
    raw = frames.received[0]["result"]["agentCapabilities"]
    assert raw["loadSession"] is True
    assert raw["sessionCapabilities"] == {
        "list": {},
        "resume": {},
        "close": {},
        "delete": {},
        # new, load, resume and fork take extra roots (tests/e2e/test_sessions.py)
        "additionalDirectories": {},
        "fork": {},  # unstable schema's session/fork
        # append and override (tests/e2e/test_client_system_prompt.py)
        "systemPrompt": {"mode": {"override": {}}},
    }
    assert raw["promptCapabilities"] == {"image": True, "embeddedContext": True}
    # stdio always; streamable HTTP and SSE tested (tests/e2e/test_mcp_sse_acp.py)
    assert raw["mcpCapabilities"] == {"http": True, "sse": True}
    # No model configured, no terminal auth: the one `agent` method says how to configure one.
    assert [m.id for m in response.auth_methods] == ["configure-model"]
    description = response.auth_methods[0].description or ""
    assert "acp-server setup" in description and "--model" in description
    assert "type" not in frames.received[0]["result"]["authMethods"][0]  # agent: the default
    assert len(frames.received) == 1


async def test_initialize_with_a_newer_version_answers_the_highest_spoken_not_above_it() -> None:
    """Since ACP v2 (issue 32): the highest version the agent speaks at or below the one asked
    for. A v2 client gets 2 (tests/e2e/test_handshake_v2.py); a v1 client asking for 1 gets 1
    (above); this v1 SDK asking for 2 gets a v2 answer it cannot read, so it is refused -32602
    for the `info` v2 requires, and the connection is still uninitialized."""
    async with running_agent() as (conn, _, frames, _):
        with pytest.raises(RequestError) as refused:
            await conn.initialize(protocol_version=2)
        assert refused.value.code == -32602 and "info" in str(refused.value.data)
        response = await conn.initialize(protocol_version=1)
    assert response.protocol_version == 1
    assert frames.received[-1]["result"]["protocolVersion"] == 1


async def test_initialize_without_client_capabilities_works() -> None:
    async with running_agent() as (conn, _, frames, _):
        response = await conn.initialize(protocol_version=1)
    assert response.protocol_version == 1
    assert "clientCapabilities" not in frames.sent[0]["params"]


async def test_new_session_returns_unique_ids(tmp_path: Path) -> None:
    async with running_agent() as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        first = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        second = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
    assert first.session_id != second.session_id
    assert first.session_id.startswith("sess_")


async def test_new_session_with_relative_cwd_is_invalid_params() -> None:
    async with running_agent() as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as caught:
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
    assert caught.value.code == -32602
    assert "absolute" in str(caught.value.data)


async def test_authenticate_with_an_unadvertised_method_is_refused() -> None:
    async with running_agent() as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as caught:
            await conn.authenticate(method_id="api-key")
    assert caught.value.code == -32602


async def test_prompt_without_a_model_says_how_to_configure_one(tmp_path: Path) -> None:
    async with running_agent(env={"ACP_SERVER_MODEL": ""}) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(RequestError) as caught:
            await conn.prompt(session_id=session.session_id, prompt=[])
    # Clients show the error's message, not its data: the how-to is in the message.
    assert caught.value.code == -32000
    assert "--model" in str(caught.value) and "ACP_SERVER_MODEL" in str(caught.value)


async def test_the_how_to_names_the_config_file_the_server_reads(tmp_path: Path) -> None:
    # Issue 34: it named ~/.config/... even when XDG_CONFIG_HOME pointed elsewhere.
    config_home = tmp_path / "elsewhere"
    written = f"(it writes {config_home / 'acp-server' / 'config.toml'})"
    env = {"ACP_SERVER_MODEL": "", "XDG_CONFIG_HOME": str(config_home)}
    async with running_agent(env=env) as (conn, _, _, _):
        response = await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(RequestError) as prompted:
            await conn.prompt(session_id=session.session_id, prompt=[])
        with pytest.raises(RequestError) as authenticated:
            await conn.authenticate(method_id="configure-model")
    said = [response.auth_methods[0].description or "", str(prompted.value)]
    said.append(str(authenticated.value))
    for text in said:
        assert written in text and "~/.config" not in text


async def test_every_frame_of_a_session_is_schema_valid(tmp_path: Path) -> None:
    # running_agent validates each agent frame against the official schema on exit.
    async with running_agent() as (conn, _, frames, _):
        await conn.initialize(protocol_version=1)
        await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.cancel(session_id="no-such-session")
    # The slash commands are announced only after the session/new answer: a client drops
    # updates for a session it does not know yet.
    assert [("result" in f) for f in frames.received] == [True, True, False]
    update = frames.received[2]["params"]["update"]
    assert update["sessionUpdate"] == "available_commands_update"
    # No model: no /model.
    assert [c["name"] for c in update["availableCommands"]] == ["mode", "compact", "rewind"]


TERMINAL_SETUP = {
    "id": "setup",
    "name": "Set up a model",
    "type": "terminal",
    "args": ["setup"],
}


@pytest.mark.parametrize("model", [[], ["--model", "echo"]], ids=["no-model", "model"])
@pytest.mark.parametrize(
    "capabilities",
    [
        ClientCapabilities(auth=AuthCapabilities(terminal=True)),
        # What the ACP registry's checking client (verify_agents.py --auth-check) sends.
        ClientCapabilities(terminal=True, field_meta={"terminal-auth": True}),
    ],
    ids=["auth.terminal", "_meta.terminal-auth"],
)
async def test_a_client_that_runs_terminal_auth_gets_the_setup_command(
    model: list[str], capabilities: ClientCapabilities
) -> None:
    async with running_agent(*model, env={"ACP_SERVER_MODEL": ""}) as (conn, _, frames, _):
        await conn.initialize(protocol_version=1, client_capabilities=capabilities)
    (method,) = frames.received[0]["result"]["authMethods"]
    assert {k: v for k, v in method.items() if k != "description"} == TERMINAL_SETUP
    assert "acp-server setup" in method["description"]


async def test_with_a_model_the_agent_method_is_still_listed_and_authenticates() -> None:
    # The ACP registry lists an agent only if initialize names an `agent` or `terminal`
    # method, and a real listing has --model in its args.
    async with running_agent("--model", "echo") as (conn, _, frames, _):
        response = await conn.initialize(protocol_version=1)
        assert [m.id for m in response.auth_methods] == ["configure-model"]
        await conn.authenticate(method_id="configure-model")
    assert "error" not in frames.received[-1]


async def test_without_a_model_authenticate_answers_the_how_to() -> None:
    async with running_agent(env={"ACP_SERVER_MODEL": ""}) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as caught:
            await conn.authenticate(method_id="configure-model")
    assert caught.value.code == -32000
    assert "acp-server setup" in str(caught.value) and "--model" in str(caught.value)
