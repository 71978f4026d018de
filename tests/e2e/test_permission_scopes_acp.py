"""What an "allow always" answer covers, through the real `acp-server` and the official SDK
client (acp_server/tools/permission_rules.py): one need of one command pattern in sandboxed
mode, one command pattern in default mode, and only the workspace it was given in (a fork
into another cwd does not carry it). Each reproduces an escalation that went through before
rules were scoped (issue 24, hole 5 and the fork weakness)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.command_sandbox import needs_bwrap
from tests.support.scripted_model import script
from tests.support.tool_client import DONE, ToolClient, agent_session, call

pytestmark = pytest.mark.anyio


@pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux only")
@needs_bwrap
async def test_allow_always_for_the_network_does_not_cover_writing_outside(
    tmp_path: Path, ws: Path
) -> None:
    outside = tmp_path / "outside.txt"
    spec = script(
        tmp_path,
        call("bash", command="echo net", needs=["network"]),
        call("bash", command="echo net", needs=["network"]),
        call("bash", command=f"echo out > {outside}", needs=["write_outside"]),
        DONE,
    )
    client = ToolClient(["allow_always", "reject_once"])
    async with agent_session(ws, spec, "--mode", "sandboxed", client=client) as s:
        assert await s.prompt() == "end_turn"
    titles = s.client.asked_titles
    # The same need of the same command ran without a question; the other need was asked.
    assert len(titles) == 2 and titles[0].startswith("Run `echo net` (sandboxed, with the host")
    assert titles[1].endswith("(not sandboxed: it asks to write outside the workspace)")
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed", "failed"]
    assert not outside.exists()


async def test_allow_always_for_one_command_does_not_cover_another(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(
        tmp_path,
        call("bash", command="git status"),
        call("bash", command="git status --short"),
        call("bash", command="git status; echo pwned > pwned.txt"),
        call("bash", command="echo pwned > pwned.txt"),
        DONE,
    )
    client = ToolClient(["allow_always"])  # then reject_once
    async with agent_session(ws, spec, client=client) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.asked_titles == [
        "Run `git status` (not sandboxed)",
        "Run `git status; echo pwned > pwned.txt` (not sandboxed)",
        "Run `echo pwned > pwned.txt` (not sandboxed)",
    ]
    assert not (ws / "pwned.txt").exists()


@pytest.mark.parametrize("elsewhere", [False, True], ids=["same-cwd", "other-cwd"])
async def test_a_fork_into_another_cwd_does_not_carry_the_always_answers(
    tmp_path: Path, ws: Path, elsewhere: bool
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    target = other if elsewhere else ws
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    client = ToolClient(["allow_always"])  # then reject_once
    async with agent_session(ws, spec, client=client, data_dir=tmp_path / "data") as s:
        assert await s.prompt() == "end_turn"
        (ws / "a.txt").unlink()
        forked = await s.conn.fork_session(session_id=s.sid, cwd=str(target), mcp_servers=[])
        s.sid = forked.session_id
        assert await s.prompt() == "end_turn"
    # Same workspace: the rule holds. Another workspace: the fork asks (and is refused).
    assert len(s.client.asked_titles) == (2 if elsewhere else 1)
    assert (target / "a.txt").exists() == (not elsewhere)


async def test_a_session_loaded_in_another_cwd_does_not_apply_its_always_answers(
    tmp_path: Path, ws: Path
) -> None:
    other, data = tmp_path / "other", tmp_path / "data"
    other.mkdir()
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient(["allow_always"]), data_dir=data) as s:
        assert await s.prompt() == "end_turn"
    async with agent_session(ws, spec, data_dir=data, load=s.sid) as same:
        (ws / "a.txt").unlink()
        assert await same.prompt() == "end_turn"
    assert same.client.permission_requests == [] and (ws / "a.txt").exists()
    async with agent_session(other, spec, data_dir=data, load=s.sid) as moved:
        assert await moved.prompt() == "end_turn"
    assert len(moved.client.permission_requests) == 1 and not (other / "a.txt").exists()
