"""Provider keys never leave the process, through the real `acp-server` and the SDK client:
bash and hooks run without the key variables (unless `--pass-env` names one), and a provider
error that echoes the key, from a base URL with credentials, reaches neither the client's
error, nor the journal, nor stderr."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError, text_block
from acp.schema import McpServerStdio

from acp_server.agent.failures import MODEL_FAILED
from tests.support.agent_process import running_agent
from tests.support.sse_server import json_reply, serve

pytestmark = pytest.mark.anyio

OPENAI_KEY = "sk-proj-Secret0penAiKey1234567890"
ANTHROPIC_KEY = "sk-ant-api03-SecretAnthropicKey987654321"
CUSTOM_KEY = "custom-Secret-Value-31337"
"""The key of a variable only the config file names (`api_key_env`): no `sk-` shape to spot."""
URL_PASSWORD = "Url-Password-4242"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))


def environment(tmp_path: Path, hooks: dict[str, Any] | None = None) -> dict[str, str]:
    """Every key set; a config file naming `MY_LLM_KEY` as the openai key variable."""
    config = tmp_path / "config" / "acp-server"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[providers.openai]\napi_key_env = "MY_LLM_KEY"\n')
    if hooks is not None:
        (config / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    return {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "ACP_SERVER_SANDBOXED": "1",
        "OPENAI_API_KEY": OPENAI_KEY,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "MY_LLM_KEY": CUSTOM_KEY,
    }


def bash_env(tmp_path: Path) -> str:
    path = tmp_path / "model.json"
    call = {"tool_call": {"name": "bash", "arguments": {"command": "env"}}}
    path.write_text(json.dumps({"responses": [[call], [{"text": "done"}]]}))
    return f"script:{path}"


def tool_output(client: Any) -> str:
    return "".join(
        c.content.text
        for _, u in client.updates
        if u.session_update == "tool_call_update" and u.status == "completed"
        for c in u.content or []
        if c.type == "content"
    )


async def test_bash_and_hooks_run_without_the_provider_keys(tmp_path: Path, ws: Path) -> None:
    hook_env = tmp_path / "hook-env"
    env = environment(tmp_path, {"prompt_submit": [{"command": f"env > {hook_env}"}]})
    argv = ("--model", bash_env(tmp_path), "--mode", "bypass")
    async with running_agent(*argv, env=env) as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
    for output in (tool_output(client), hook_env.read_text()):
        assert "XDG_CONFIG_HOME=" in output  # the rest of the environment is there
        for name, value in (
            ("OPENAI_API_KEY", OPENAI_KEY),
            ("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
            ("MY_LLM_KEY", CUSTOM_KEY),
        ):
            assert name not in output
            assert value not in output


async def test_an_mcp_stdio_server_runs_without_the_provider_keys(tmp_path: Path, ws: Path) -> None:
    # The server is a shell that records its environment and then idles; the agent reports
    # it as unavailable, which does not matter here.
    seen = tmp_path / "mcp-env"
    server = McpServerStdio(
        name="recorder", command="sh", args=["-c", f"env > {seen}; exec sleep 300"], env=[]
    )
    async with running_agent("--model", "echo", env=environment(tmp_path)) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        await conn.new_session(cwd=str(ws), mcp_servers=[server])
        # A hang guard: the agent loads the MCP SDK before it starts the server, which took
        # over 10 s on a loaded machine.
        with anyio.fail_after(60):
            while not await anyio.Path(seen).exists() or not seen.read_text():  # noqa: ASYNC110
                await anyio.sleep(0.01)
    recorded = seen.read_text()
    assert "PATH=" in recorded
    for value in (OPENAI_KEY, ANTHROPIC_KEY, CUSTOM_KEY):
        assert value not in recorded


async def test_pass_env_lets_the_named_key_through_and_only_it(tmp_path: Path, ws: Path) -> None:
    argv = ("--model", bash_env(tmp_path), "--mode", "bypass", "--pass-env", "MY_LLM_KEY")
    async with running_agent(*argv, env=environment(tmp_path)) as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("go")])
    output = tool_output(client)
    assert f"MY_LLM_KEY={CUSTOM_KEY}" in output
    assert OPENAI_KEY not in output and ANTHROPIC_KEY not in output


async def test_a_provider_error_echoing_the_key_reaches_no_exit(tmp_path: Path, ws: Path) -> None:
    # The config names MY_LLM_KEY as the openai key variable (a key with no `sk-` shape, hidden
    # as a literal); OPENAI_API_KEY is still a key to hide. The server echoes both, the
    # request's Authorization header and the base URL with its credentials.
    key = CUSTOM_KEY
    data = tmp_path / "data"
    stderr_path = tmp_path / "stderr"
    env = environment(tmp_path)
    async with serve() as server:
        base_url = f"http://alice:{URL_PASSWORD}@127.0.0.1:{server.port}/v1"
        echo = (
            f"no model here for key {key} (also {OPENAI_KEY}); you sent "
            f"'Authorization: Bearer {key}' to {base_url}"
        )
        # Three answers: the context-window probes (GET /v1/models, GET /props) at the first
        # prompt get the same echo, then the chat request does.
        server.add(*[json_reply(404, {"error": {"message": echo, "type": "not_found"}})] * 3)
        env["OPENAI_BASE_URL"] = base_url
        argv = ("--model", "openai:gpt-x", "--data-dir", str(data), "--log-level", "debug")
        with stderr_path.open("wb") as stderr:
            async with running_agent(*argv, env=env, stderr=stderr) as (conn, agent, _, _):
                await conn.initialize(protocol_version=1)
                sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
                with pytest.raises(RequestError) as caught:
                    await conn.prompt(session_id=sid, prompt=[text_block("go")])
                agent.stdin.close()
                with anyio.fail_after(10):
                    await agent.wait()
        assert server.requests, "the agent never reached the fake provider"
    error = f"{caught.value} {json.dumps(caught.value.data)}"
    assert "HTTP 404" in error and "no model here" in error  # the error itself got through
    journal = "".join(p.read_text() for p in data.rglob("*") if p.is_file())
    assert "no model here" not in journal and MODEL_FAILED in journal  # durable text is coarse
    logged = stderr_path.read_text()
    assert "404" in logged
    for exit_text in (error, journal, logged):
        for secret in (key, OPENAI_KEY, URL_PASSWORD, "alice:"):
            assert secret not in exit_text


def bash_script(tmp_path: Path, command: str) -> str:
    path = tmp_path / "model.json"
    call = {"tool_call": {"name": "bash", "arguments": {"command": command}}}
    path.write_text(json.dumps({"responses": [[call], [{"text": "done"}]]}))
    return f"script:{path}"


@pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's")
async def test_a_child_cannot_read_the_keys_from_the_agents_proc_environ(
    tmp_path: Path, ws: Path
) -> None:
    # An unsandboxed command (bypass mode) reads the agent's initial environment block, the
    # one /proc/<pid>/environ shows whatever os.environ does later; the agent is its parent.
    # Failed before the fix: the block held all three keys and the URL's password.
    out = tmp_path / "environ"
    command = (
        f"echo PPID=$PPID > {out}; "
        f"tr '\\0' '\\n' < /proc/$PPID/environ >> {out}; echo OWN: >> {out}; env >> {out}"
    )
    env = environment(tmp_path)
    env["OPENAI_BASE_URL"] = f"http://alice:{URL_PASSWORD}@127.0.0.1:9/v1"
    argv = ("--model", bash_script(tmp_path, command), "--mode", "bypass")
    async with running_agent(*argv, env=env) as (conn, agent, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
        pid = agent.pid
    seen = out.read_text()
    assert seen.startswith(f"PPID={pid}\n")  # it read the agent's own block
    assert "XDG_CONFIG_HOME=" in seen  # and the block is readable: the rest is there
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, CUSTOM_KEY, URL_PASSWORD):
        assert secret not in seen
    # A base URL with credentials is a key: the command's own environment lacks it too.
    assert "OPENAI_BASE_URL" not in seen.partition("OWN:")[2]


FILE_KEY = "file-Secret-Key-55501"
"""A key the config file holds itself (`api_key`, what `acp-server setup` writes)."""


async def test_a_key_held_by_the_config_file_is_sent_and_redacted(tmp_path: Path, ws: Path) -> None:
    stderr_path = tmp_path / "stderr"
    config = tmp_path / "config" / "acp-server"
    config.mkdir(parents=True)
    async with serve() as server:
        (config / "config.toml").write_text(
            f'[providers.openai]\nbase_url = "http://127.0.0.1:{server.port}/v1"\n'
            f'api_key = "{FILE_KEY}"\n'
        )
        echo = f"bad key {FILE_KEY}"
        server.add(*[json_reply(401, {"error": {"message": echo}})] * 3)
        env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "OPENAI_API_KEY": ""}
        argv = ("--model", "openai:gpt-x", "--data-dir", str(tmp_path / "d"))
        with stderr_path.open("wb") as stderr:
            async with running_agent(*argv, env=env, stderr=stderr) as (conn, agent, _, _):
                await conn.initialize(protocol_version=1)
                sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
                with pytest.raises(RequestError) as caught:
                    await conn.prompt(session_id=sid, prompt=[text_block("go")])
                agent.stdin.close()
                with anyio.fail_after(10):
                    await agent.wait()
        chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert chat and chat[-1].headers["authorization"] == f"Bearer {FILE_KEY}"
    error = f"{caught.value} {json.dumps(caught.value.data)}"
    # The message names where the key came from as the place to fix it.
    assert "HTTP 401" in error and "Set api_key in [providers.openai] of" in error
    for exit_text in (error, stderr_path.read_text()):
        assert FILE_KEY not in exit_text
