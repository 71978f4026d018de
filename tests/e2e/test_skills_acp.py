"""Skills through the real process against a local OpenAI-compatible server: the system prompt
lists each skill's name and description (not its body), the `skill` tool is offered when the
session has skills and loads a body by name, and a session without skills gets neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.agent_process import running_agent
from tests.support.openai_agent import environment, text_reply, tool_call
from tests.support.sse_server import serve

pytestmark = pytest.mark.anyio


WINDOW = "[providers.openai]\ncontext_window = 32000\n"


def chats(server: Any) -> list[Any]:
    return [s.json() for s in server.requests if s.path.endswith("/chat/completions")]


def _skill(repo: Path) -> Path:
    folder = repo / ".agents" / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploy the service safely\n---\n"
        "Run ./deploy.sh $1 and watch the health check.\n"
    )
    return folder


async def test_the_model_sees_the_list_and_loads_a_body_with_the_tool(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    folder = _skill(repo)
    replies = (tool_call("c1", "skill", json.dumps({"name": "deploy"})), text_reply("done"))
    async with serve(*replies) as server:
        env = environment(tmp_path, server, WINDOW)
        async with running_agent("--model", "openai:m", "--mode", "read_only", env=env) as (
            conn,
            _,
            _,
            _,
        ):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
            answer = await conn.prompt(session_id=sid, prompt=[text_block("ship it")])
        first, second = chats(server)
    assert answer.stop_reason == "end_turn"
    system = str(first["messages"][0]["content"])
    assert "# Skills" in system and "- deploy: Deploy the service safely" in system
    assert "deploy.sh" not in system  # only names and descriptions
    assert "skill" in [t["function"]["name"] for t in first["tools"]]
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    content: Any = result["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    assert f"Use the skill deploy (its files are in {folder})" in text
    assert "Run ./deploy.sh $1 and watch the health check." in text


async def test_no_skills_no_tool_and_no_list(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    async with serve(text_reply("hi")) as server:
        env = environment(tmp_path, server, WINDOW)
        async with running_agent("--model", "openai:m", env=env) as (conn, _, _, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        [first] = chats(server)
    assert "# Skills" not in str(first["messages"][0]["content"])
    assert "skill" not in [t["function"]["name"] for t in first.get("tools", [])]


async def test_a_skill_that_appears_mid_session_is_reachable_at_the_next_prompt(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    replies = (
        text_reply("no skills yet"),
        tool_call("c1", "skill", json.dumps({"name": "deploy"})),
        text_reply("done"),
    )
    async with serve(*replies) as server:
        env = environment(tmp_path, server, WINDOW)
        async with running_agent("--model", "openai:m", "--mode", "read_only", env=env) as (
            conn,
            _,
            frames,
            _,
        ):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            _skill(repo)  # written while the session is open
            answer = await conn.prompt(session_id=sid, prompt=[text_block("ship it")])
            listed = [
                [c["name"] for c in f["params"]["update"]["availableCommands"]]
                for f in frames.received
                if f.get("method") == "session/update"
                and f["params"]["update"]["sessionUpdate"] == "available_commands_update"
            ]
        before, after, loaded = chats(server)
    assert answer.stop_reason == "end_turn"
    assert "skill" not in [t["function"]["name"] for t in before.get("tools", [])]
    assert "# Skills" not in str(before["messages"][0]["content"])
    assert "skill" in [t["function"]["name"] for t in after["tools"]]
    assert "- deploy: Deploy the service safely" in str(after["messages"][0]["content"])
    [result] = [m for m in loaded["messages"] if m["role"] == "tool"]
    assert "Run ./deploy.sh $1" in str(result["content"])
    assert "deploy" not in listed[0] and "deploy" in listed[-1]  # /deploy advertised too


async def test_the_skill_places_are_configurable(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    _skill(repo)  # in .agents/skills: not a configured place any more
    team = repo / "team-skills" / "review"
    team.mkdir(parents=True)
    (team / "SKILL.md").write_text(
        "---\nname: review\ndescription: Review a change\n---\nRead it.\n"
    )
    own = tmp_path / "my-skills" / "notes"
    own.mkdir(parents=True)
    (own / "SKILL.md").write_text("---\nname: notes\ndescription: Keep notes\n---\nWrite them.\n")
    config = f'{WINDOW}[skills]\ndirs = ["team-skills", "{tmp_path / "my-skills"}"]\n'
    async with serve(text_reply("hi")) as server:
        env = environment(tmp_path, server, config)
        async with running_agent("--model", "openai:m", env=env) as (conn, _, _, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        [first] = chats(server)
    system = str(first["messages"][0]["content"])
    assert "- review: Review a change" in system and "- notes: Keep notes" in system
    assert "deploy" not in system
