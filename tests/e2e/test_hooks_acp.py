"""Hooks through the real `acp-server` process and the official SDK client: a blocked prompt
answers `refusal` after a message naming the hook, workspace hooks ask once for permission,
a pre_tool hook denies a tool call, and `session/cancel` reaps a running hook.

The user's hooks file lives under a temporary `XDG_CONFIG_HOME`, the workspace's in the
session's cwd.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.command_sandbox import needs_bwrap
from tests.support.processes import existing, wait_for_pids
from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    SANDBOXED,
    ToolClient,
    agent_session,
    call,
    prompt_and_then,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """An empty `XDG_CONFIG_HOME` (so the real user's hooks never leak into a test)."""
    path = tmp_path / "config"
    path.mkdir()
    return path


def write_hooks(path: Path, **events: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": events}))
    return path


def user_hooks(config: Path, **events: list[dict[str, Any]]) -> Path:
    return write_hooks(config / "acp-server" / "hooks.json", **events)


def workspace_hooks(ws: Path, **events: list[dict[str, Any]]) -> Path:
    return write_hooks(ws / ".acp-server" / "hooks.json", **events)


def env(config: Path, **extra: str) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(config), **extra}


BLOCK = 'echo \'{"decision": "block", "reason": "no deploys on friday"}\''


async def test_a_blocked_prompt_answers_refusal_after_a_message_naming_the_hook(
    tmp_path: Path, ws: Path, config: Path
) -> None:
    user_hooks(config, prompt_submit=[{"command": BLOCK}])
    async with agent_session(ws, script(tmp_path, DONE), env=env(config)) as s:
        assert await s.prompt("deploy") == "refusal"
        [chunk] = s.wire_updates("agent_message_chunk")
        text = chunk["content"]["text"]
        assert "no deploys on friday" in text
        assert "user prompt_submit hook" in text and "no deploys on friday" in text
        assert str(config / "acp-server" / "hooks.json") in text
        assert s.client.permission_requests == []  # user hooks never ask
        # The chunk came before the response to the prompt.
        frames = s.frames.received
        chunk_at = next(
            i
            for i, f in enumerate(frames)
            if f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        )
        answer_at = next(
            i for i, f in enumerate(frames) if f.get("result", {}).get("stopReason") == "refusal"
        )
        assert chunk_at < answer_at


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_workspace_hooks_ask_once_and_run_only_when_allowed(
    tmp_path: Path, ws: Path, config: Path, answer: str
) -> None:
    user_ran, workspace_ran = tmp_path / "user", tmp_path / "workspace"
    user_hooks(config, prompt_submit=[{"command": f"echo x >> {user_ran}"}])
    hooks_file = workspace_hooks(ws, prompt_submit=[{"command": f"echo x >> {workspace_ran}"}])
    spec = script(tmp_path, DONE, DONE)
    async with agent_session(ws, spec, client=ToolClient([answer]), env=env(config)) as s:
        assert await s.prompt() == "end_turn"
        assert await s.prompt() == "end_turn"
        title = f"Run hooks from {hooks_file}"
        assert s.client.asked_titles == [title]  # once per session
        [announced] = s.client.kinds("tool_call")
        assert announced.title == title and announced.kind == "execute"
        [ended] = [u for u in s.client.kinds("tool_call_update") if u.status]
        assert ended.tool_call_id == announced.tool_call_id
        assert ended.status == ("completed" if answer == "allow_once" else "failed")
    assert user_ran.read_text() == "x\nx\n"
    if answer == "allow_once":
        assert workspace_ran.read_text() == "x\nx\n"
    else:
        assert not workspace_ran.exists()


async def test_a_pre_tool_hook_denies_a_tool_call_and_the_turn_goes_on(
    tmp_path: Path, ws: Path, config: Path
) -> None:
    marker = tmp_path / "ran"
    deny = 'echo \'{"decision": "deny", "reason": "no shell today"}\''
    user_hooks(config, pre_tool=[{"command": deny, "tools": ["bash"]}])
    spec = script(tmp_path, call("bash", command=f"touch {marker}"), DONE)
    async with agent_session(ws, spec, "--mode", "bypass", env=env(config, **SANDBOXED)) as s:
        assert await s.prompt() == "end_turn"
        [(_, status, output)] = s.client.finished()
        assert status == "failed"
        assert output.startswith("denied: no shell today (denied by the user pre_tool hook")
    assert not marker.exists()


async def test_cancel_reaps_a_running_hook_before_the_prompt_is_answered(
    tmp_path: Path, ws: Path, config: Path
) -> None:
    pidfile = tmp_path / "pids"
    command = f"echo $$ >> {pidfile}; sleep 300 & echo $! >> {pidfile}; wait"
    user_hooks(config, prompt_submit=[{"command": command}])
    async with agent_session(ws, script(tmp_path, DONE, DONE), env=env(config)) as s:
        pids: list[int] = []

        async def cancel_once_running() -> None:
            pids.extend(await wait_for_pids(pidfile, 2))
            assert existing(pids) == pids
            await s.conn.cancel(session_id=s.sid)

        stop, survivors = await prompt_and_then(s, cancel_once_running, lambda: existing(pids))
        assert stop == "cancelled"
        assert survivors == []
        assert s.wire_updates("agent_message_chunk") == []  # the model was never asked


@needs_bwrap
async def test_a_hook_script_rewritten_by_a_sandboxed_command_is_asked_about_again(
    tmp_path: Path, ws: Path, config: Path
) -> None:
    """Issue 24, hole 4: the user allowed `sh lint.sh`; a sandboxed command (no question in
    sandboxed mode) rewrites lint.sh to write outside the workspace. The next hook run would
    run it unsandboxed: instead the user is asked again, naming the file, and the refusal
    keeps it from running."""
    ran, pwned = tmp_path / "lint-ran", tmp_path / "pwned"
    (ws / "lint.sh").write_text(f"echo v1 >> {ran}\n")
    hooks_file = workspace_hooks(ws, pre_tool=[{"command": "sh lint.sh", "tools": ["bash"]}])
    spec = script(
        tmp_path,
        call("bash", command=f"echo 'touch {pwned}' > lint.sh"),
        call("bash", command="true"),
        DONE,
    )
    client = ToolClient(["allow_once", "reject_once"])
    async with agent_session(ws, spec, "--mode", "sandboxed", client=client, env=env(config)) as s:
        assert await s.prompt() == "end_turn"
    title = f"Run hooks from {hooks_file}"
    assert s.client.asked_titles == [
        title,
        f"{title} (changed since you allowed them: {ws / 'lint.sh'})",
    ]
    commands = [st for t, st, _ in s.client.finished() if t.startswith("Run `")]
    assert commands == ["completed", "completed"]
    assert ran.read_text() == "v1\n"  # the version the user allowed ran, once
    assert not pwned.exists()
