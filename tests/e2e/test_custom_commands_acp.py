"""Custom slash commands through the real process (`--model echo` repeats the prompt it gets):
files in `.acp-server/commands/` and the user's config dir are advertised with their
description, `/NAME args` expands the body with the arguments into the user's prompt, the list
is refreshed at the next prompt when the files change, a built-in name wins and the user is
told, and hostile files are refused without blocking. Every frame is checked against the
schema by the harness."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.agent_process import FrameLog, running_agent

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="FIFOs and links as on Linux"),
]

BUILTINS = ["mode", "compact", "rewind", "model"]


def updates_of(frames: FrameLog, kind: str) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in frames.received
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == kind
    ]


def listed(frames: FrameLog) -> list[list[tuple[str, str]]]:
    """Every `available_commands_update`, as (name, description) pairs."""
    return [
        [(c["name"], c["description"]) for c in u["availableCommands"]]
        for u in updates_of(frames, "available_commands_update")
    ]


def messages(frames: FrameLog) -> list[str]:
    """The agent's messages, one string per message id, in order."""
    texts: dict[str, str] = {}
    for u in updates_of(frames, "agent_message_chunk"):
        key = u.get("messageId") or ""
        texts[key] = texts.get(key, "") + u["content"]["text"]
    return list(texts.values())


def workspace(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """(repository, its commands dir, env with a config dir holding a user command)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    commands = repo / ".acp-server" / "commands"
    commands.mkdir(parents=True)
    config = tmp_path / "config"
    user = config / "acp-server" / "commands"
    user.mkdir(parents=True)
    (user / "greet.md").write_text("Say hello to $1 and then to $2.\n")
    return repo, commands, {"XDG_CONFIG_HOME": str(config)}


async def test_commands_are_advertised_expanded_and_refreshed(tmp_path: Path) -> None:
    repo, commands, env = workspace(tmp_path)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file carefully\nargument-hint: FILE\n---\n"
        "Review $ARGUMENTS for bugs. Focus on $1.\n"
    )
    async with running_agent("--model", "echo", env=env) as (conn, _, frames, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        ran = await conn.prompt(session_id=sid, prompt=[text_block("/review src/a.py '$1'")])
        greeted = await conn.prompt(session_id=sid, prompt=[text_block('/greet "Ada L" Bob')])
        (commands / "ship.md").write_text("Ship it now.\n")  # no front matter
        (commands / "review.md").unlink()
        await conn.prompt(session_id=sid, prompt=[text_block("/ship v1.2")])
        await conn.prompt(session_id=sid, prompt=[text_block("plain prompt")])

    assert ran.stop_reason == greeted.stop_reason == "end_turn"
    first, second = listed(frames)  # one at session/new, one when the files changed
    assert [name for name, _ in first] == [*BUILTINS, "greet", "review"]
    assert ("review", "Review a file carefully") in first
    assert ("greet", "Say hello to $1 and then to $2.") in first  # first line as description
    [review] = [
        c
        for c in updates_of(frames, "available_commands_update")[0]["availableCommands"]
        if c["name"] == "review"
    ]
    assert review["input"] == {"hint": "FILE"}
    assert [name for name, _ in second] == [*BUILTINS, "greet", "ship"]
    said = messages(frames)
    # One pass: the argument `$1` is not expanded again.
    assert said[0] == "Review src/a.py '$1' for bugs. Focus on src/a.py."
    assert said[1] == "Say hello to Ada L and then to Bob."
    assert said[2] == "Ship it now.\n\nv1.2"  # no placeholder: the arguments follow the body
    assert said[3] == "plain prompt"


@pytest.mark.parametrize("opted_in", [True, False])
async def test_a_builtin_name_wins_and_the_user_is_told(tmp_path: Path, opted_in: bool) -> None:
    repo, commands, env = workspace(tmp_path)
    (commands / "mode.md").write_text("Pretend to switch the mode to $1.\n")
    async with running_agent("--model", "echo", env=env) as (conn, _, frames, _):
        capabilities = {"session": {"notices": {}}} if opted_in else {}
        await conn._conn.send_request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
        )
        sid = (await conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("/mode read_only")])
        await conn.prompt(session_id=sid, prompt=[text_block("/mode default")])

    [names] = [[name for name, _ in update] for update in listed(frames)]
    assert names.count("mode") == 1 and "greet" in names
    notices = [n for n in updates_of(frames, "notice") if n["title"] == "Custom command ignored"]
    said = messages(frames)
    if opted_in:
        [notice] = notices  # told once
        assert "/mode" in notice["description"] and "built-in" in notice["description"]
        assert said == ["Mode set to read_only.", "Mode set to default."]
    else:
        assert notices == []
        assert "/mode" in said[0] and "built-in command of that name wins" in said[0]
        assert said[1:] == ["Mode set to read_only.", "Mode set to default."]  # told only once
    assert [u["currentModeId"] for u in updates_of(frames, "current_mode_update")] == [
        "read_only",
        "default",
    ]


async def test_hostile_command_files_are_refused_without_blocking(tmp_path: Path) -> None:
    repo, commands, env = workspace(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("the user's private notes\n")
    (commands / "leak.md").symlink_to(secret)  # a link out of the repository
    os.mkfifo(commands / "hang.md")  # would block a plain open()
    (commands / "huge.md").write_text("x" * (64 * 1024 + 10))
    (commands / "bad name!.md").write_text("never listed\n")
    (commands / "ok.md").write_text("fine\n")
    nested = repo / "sub" / ".acp-server"
    nested.mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "stolen.md").write_text("outside the repository\n")
    (nested / "commands").symlink_to(outside)  # a whole directory leading out
    async with running_agent("--model", "echo", env=env) as (conn, _, frames, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(repo / "sub"), mcp_servers=[])).session_id
        huge = await conn.prompt(session_id=sid, prompt=[text_block("/huge")])
        leak = await conn.prompt(session_id=sid, prompt=[text_block("/leak")])
        ok = await conn.prompt(session_id=sid, prompt=[text_block("/ok")])

    assert huge.stop_reason == leak.stop_reason == ok.stop_reason == "end_turn"
    [names] = [[name for name, _ in update] for update in listed(frames)]
    assert names == [*BUILTINS, "greet", "huge", "ok"]  # the huge one fails only when run
    said = messages(frames)
    assert said[0].startswith("The /huge command was not run:")
    assert "limited to 65,536" in said[0]
    assert said[1] == "/leak"  # not a command: an ordinary prompt, the secret never read
    assert said[2] == "fine"
    assert all("private notes" not in s and "outside the repository" not in s for s in said)


async def test_skills_are_listed_and_slash_name_loads_the_body(tmp_path: Path) -> None:
    repo, _, env = workspace(tmp_path)
    deploy = repo / ".agents" / "skills" / "deploy-dir"
    deploy.mkdir(parents=True)
    (deploy / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploy the service safely\n---\nRun ./deploy.sh $1\n"
    )
    legacy = repo / ".claude" / "skills" / "legacy"
    legacy.mkdir(parents=True)
    (legacy / "SKILL.md").write_text("---\ndescription: An older skill\n---\nOld body\n")
    user_skill = tmp_path / "config" / "acp-server" / "skills" / "mine"
    user_skill.mkdir(parents=True)
    (user_skill / "SKILL.md").write_text("---\nname: mine\ndescription: The user's\n---\nMine\n")
    elsewhere = tmp_path / "elsewhere-skill"
    elsewhere.mkdir()
    (elsewhere / "SKILL.md").write_text("---\nname: stolen\n---\nprivate\n")
    (repo / ".agents" / "skills" / "stolen").symlink_to(elsewhere)  # a folder leading out
    async with running_agent("--model", "echo", env=env) as (conn, _, frames, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("/deploy prod")])

    [update] = listed(frames)
    assert ("deploy", "Deploy the service safely") in update
    assert ("legacy", "An older skill") in update
    assert ("mine", "The user's") in update
    assert "stolen" not in [name for name, _ in update]
    [said] = messages(frames)
    # The body as written ($1 untouched), naming the folder, then the arguments.
    assert (
        said == f"Use the skill deploy (its files are in {deploy}):\n\nRun ./deploy.sh $1\n\nprod"
    )


@pytest.mark.parametrize("opted_in", [True, False])
async def test_a_repository_command_or_skill_replacing_the_users_own_is_told(
    tmp_path: Path, opted_in: bool
) -> None:
    repo, commands, env = workspace(tmp_path)
    (commands / "greet.md").write_text("The repository greets $1.\n")
    user_skill = tmp_path / "config" / "acp-server" / "skills" / "tidy"
    user_skill.mkdir(parents=True)
    (user_skill / "SKILL.md").write_text("---\nname: tidy\ndescription: mine\n---\nTidy up.\n")
    repo_skill = repo / ".agents" / "skills" / "tidy"
    repo_skill.mkdir(parents=True)
    (repo_skill / "SKILL.md").write_text("---\nname: tidy\ndescription: theirs\n---\nTheirs.\n")
    async with running_agent("--model", "echo", env=env) as (conn, _, frames, _):
        capabilities = {"session": {"notices": {}}} if opted_in else {}
        await conn._conn.send_request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
        )
        sid = (await conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("/greet Ada")])
        await conn.prompt(session_id=sid, prompt=[text_block("/greet Bob")])

    replaced = [
        (
            "greet",
            str(commands / "greet.md"),
            str(tmp_path / "config" / "acp-server" / "commands" / "greet.md"),
        ),
        ("tidy", str(repo_skill / "SKILL.md"), str(user_skill / "SKILL.md")),
    ]
    said = messages(frames)
    if opted_in:
        notices = [
            n for n in updates_of(frames, "notice") if n["title"] == "Your command is replaced"
        ]
        assert len(notices) == 2  # each told once, not again at the second prompt
        texts = [n["description"] for n in notices]
        assert all(n["severity"] == "warning" for n in notices)
    else:
        assert updates_of(frames, "notice") == []
        texts, said = said[:2], said[2:]
    for (name, theirs, mine), text in zip(replaced, texts, strict=True):
        assert f"/{name} in this session is the repository's {theirs}, not your own {mine}" in text
        assert "a repository's command or skill wins over yours of the same name" in text
    # The repository's file wins: it is what ran.
    assert said == ["The repository greets Ada.", "The repository greets Bob."]
