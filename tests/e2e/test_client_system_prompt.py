"""`systemPrompt` on session/new, load, resume and fork, through the real process with raw
frames against a local OpenAI-compatible server whose requests show the system message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.raw_client import RawClient, raw_agent, text
from tests.support.sse_server import FakeServer, openai_chunks, serve

pytestmark = pytest.mark.anyio

BASE = "You are acp-server, a coding agent."
CLIENT_RULES = "Answer every question as a haiku."


def _answer(value: str = "ok") -> Any:
    return openai_chunks(
        [
            {"choices": [{"index": 0, "delta": {"content": value}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
    )


def systems(server: FakeServer) -> list[str]:
    """The system message of every chat request the server saw, in order."""
    out = []
    for seen in server.requests:
        if seen.path.endswith("/chat/completions"):
            first = seen.json()["messages"][0]
            assert first["role"] == "system"
            out.append(str(first["content"]))
    return out


def prompt_of(mode: str, *texts: str) -> dict[str, Any]:
    return {"mode": mode, "content": [{"type": "text", "text": t} for t in texts]}


@asynccontextmanager
async def model_server(
    tmp_path: Path, answers: int
) -> AsyncIterator[tuple[FakeServer, dict[str, str]]]:
    config_home = tmp_path / "config"
    (config_home / "acp-server").mkdir(parents=True, exist_ok=True)
    async with serve(*[_answer() for _ in range(answers)]) as server:
        (config_home / "acp-server" / "config.toml").write_text(
            f'[providers.openai]\nbase_url = "{server.url}/v1"\ncontext_window = 32000\n'
        )
        yield server, {"XDG_CONFIG_HOME": str(config_home), "OPENAI_API_KEY": "test-key"}


def agent_args(tmp_path: Path) -> list[str]:
    return ["--model", "openai:test-model", "--data-dir", str(tmp_path / "data")]


async def start(client: RawClient) -> dict[str, Any]:
    result: dict[str, Any] = await client.call(
        "initialize", {"protocolVersion": 1, "clientCapabilities": {}}
    )
    return result


async def prompt(client: RawClient, sid: str) -> None:
    result = await client.call("session/prompt", {"sessionId": sid, "prompt": text("hi")})
    assert result["stopReason"] == "end_turn"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("Project rule: tabs, never spaces.\n")
    return ws


async def test_initialize_advertises_append_and_override(tmp_path: Path) -> None:
    async with (
        model_server(tmp_path, 0) as (_, env),
        raw_agent(*agent_args(tmp_path), env=env) as client,
    ):
        result = await start(client)
    system_prompt = result["agentCapabilities"]["sessionCapabilities"]["systemPrompt"]
    assert system_prompt == {"mode": {"override": {}}}


async def test_append_adds_the_client_text_after_our_instructions(
    tmp_path: Path, workspace: Path
) -> None:
    async with model_server(tmp_path, 1) as (server, env):
        async with raw_agent(*agent_args(tmp_path), env=env) as client:
            await start(client)
            new = await client.call(
                "session/new",
                {
                    "cwd": str(workspace),
                    "mcpServers": [],
                    "systemPrompt": prompt_of("append", CLIENT_RULES, "Second block."),
                },
            )
            await prompt(client, new["sessionId"])
        [system] = systems(server)
    assert system.index(BASE) < system.index(CLIENT_RULES) < system.index("Second block.")
    assert system.index("Second block.") < system.index(f"Working directory: {workspace}")
    assert "Project rule: tabs, never spaces." in system


async def test_override_replaces_our_instructions_but_keeps_the_environment_and_agents_md(
    tmp_path: Path, workspace: Path
) -> None:
    async with model_server(tmp_path, 1) as (server, env):
        async with raw_agent(*agent_args(tmp_path), env=env) as client:
            await start(client)
            new = await client.call(
                "session/new",
                {
                    "cwd": str(workspace),
                    "mcpServers": [],
                    "systemPrompt": prompt_of("override", CLIENT_RULES),
                },
            )
            await prompt(client, new["sessionId"])
        [system] = systems(server)
    assert BASE not in system
    assert system.startswith(CLIENT_RULES)
    assert f"Working directory: {workspace}" in system
    assert "Project rule: tabs, never spaces." in system


async def test_load_resume_and_fork_keep_the_prompt_unless_another_is_sent(
    tmp_path: Path, workspace: Path
) -> None:
    session_args = {"cwd": str(workspace), "mcpServers": []}
    async with model_server(tmp_path, 5) as (server, env):
        async with raw_agent(*agent_args(tmp_path), env=env) as client:
            await start(client)
            new = await client.call(
                "session/new", {**session_args, "systemPrompt": prompt_of("append", CLIENT_RULES)}
            )
            sid = new["sessionId"]
            await prompt(client, sid)  # 1: the prompt given on session/new
        async with raw_agent(*agent_args(tmp_path), env=env) as client:  # a new process
            await start(client)
            await client.call("session/load", {**session_args, "sessionId": sid})
            await prompt(client, sid)  # 2: kept by load
            forked = await client.call("session/fork", {**session_args, "sessionId": sid})
            await prompt(client, forked["sessionId"])  # 3: kept by fork
        async with raw_agent(*agent_args(tmp_path), env=env) as client:
            await start(client)
            await client.call(
                "session/resume",
                {**session_args, "sessionId": sid, "systemPrompt": prompt_of("override", "New.")},
            )
            await prompt(client, sid)  # 4: replaced by resume's
        async with raw_agent(*agent_args(tmp_path), env=env) as client:
            await start(client)
            await client.call("session/resume", {**session_args, "sessionId": sid})
            await prompt(client, sid)  # 5: the replacement is journaled too
        seen = systems(server)
    assert len(seen) == 5
    assert all(CLIENT_RULES in system and BASE in system for system in seen[:3])
    assert all(system.startswith("New.") and BASE not in system for system in seen[3:])
    assert all(CLIENT_RULES not in system for system in seen[3:])


@pytest.mark.parametrize(
    ("system_prompt", "says"),
    [
        (
            {
                "mode": "append",
                "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}],
            },
            "'image' block",
        ),
        (prompt_of("replace", CLIENT_RULES), "'replace' is not supported"),
        ({"mode": "append", "content": []}, "is empty"),
    ],
)
async def test_a_prompt_that_cannot_be_applied_is_refused_and_creates_nothing(
    tmp_path: Path, workspace: Path, system_prompt: dict[str, Any], says: str
) -> None:
    async with (
        model_server(tmp_path, 0) as (_, env),
        raw_agent(*agent_args(tmp_path), env=env) as client,
    ):
        await start(client)
        refused = await client.request(
            "session/new",
            {"cwd": str(workspace), "mcpServers": [], "systemPrompt": system_prompt},
        )
        listed = await client.call("session/list", {})
    assert refused["error"]["code"] == -32602
    assert says in refused["error"]["data"]
    assert listed["sessions"] == []


async def test_a_long_prompt_is_cut_with_a_note(tmp_path: Path, workspace: Path) -> None:
    long_text = "word " * 10_000  # 50,000 bytes
    async with model_server(tmp_path, 1) as (server, env):
        async with raw_agent(*agent_args(tmp_path), env=env) as client:
            await start(client)
            new = await client.call(
                "session/new",
                {
                    "cwd": str(workspace),
                    "mcpServers": [],
                    "systemPrompt": prompt_of("append", long_text),
                },
            )
            await prompt(client, new["sessionId"])
        [system] = systems(server)
    assert "(cut: the client's system prompt has 50,000 bytes and only the first 32,768" in system
    assert system.count("word") < 10_000
