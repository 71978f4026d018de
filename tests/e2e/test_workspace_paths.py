"""Paths through the real `acp-server`: escapes from the workspace refused naming its roots,
`default` mode asking before reading outside it, reads inside never asking.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp import text_block

from tests.support.agent_process import running_agent
from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    ToolClient,
    agent_session,
    call,
)

pytestmark = [
    pytest.mark.anyio,
    # Process groups, the subreaper and /proc: the runner's guarantees are Linux ones.
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


@pytest.mark.parametrize("escape", ["dotdot", "absolute", "symlink"])
async def test_path_escapes_are_refused_naming_the_workspace_roots(
    tmp_path: Path, ws: Path, escape: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text("untouched")
    (ws / "link").symlink_to(outside)
    path = {
        "dotdot": "../outside/target.txt",
        "absolute": str(outside / "target.txt"),
        "symlink": "link/target.txt",
    }[escape]
    spec = script(tmp_path, call("write_file", path=path, content="escaped"), DONE)
    async with agent_session(ws, spec, "--mode", "accept_edits") as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    [(_, status, text)] = s.client.finished()
    assert status == "failed"
    assert "outside the workspace" in text and str(ws) in text
    assert (outside / "target.txt").read_text() == "untouched"


@pytest.mark.parametrize(
    ("answer", "status"), [("reject_once", "failed"), ("allow_once", "completed")]
)
async def test_default_mode_asks_before_reading_outside_the_workspace(
    tmp_path: Path, ws: Path, answer: str, status: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    spec = script(tmp_path, call("read_file", path=str(secret)), DONE)
    async with agent_session(ws, spec, client=ToolClient([answer])) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.asked_titles == [f"Read {secret} (outside the workspace)"]
    [(_, got, text)] = s.client.finished()
    assert got == status
    assert ("secret" in text) == (status == "completed")


async def test_reading_inside_the_workspace_never_asks(tmp_path: Path, ws: Path) -> None:
    (ws / "a.txt").write_text("inside")
    spec = script(tmp_path, call("read_file", path="a.txt"), call("list_dir"), DONE)
    async with agent_session(ws, spec) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed"]


async def test_extra_roots_are_the_workspace_for_the_request_that_names_them(
    tmp_path: Path, ws: Path
) -> None:
    """v1 advertises `sessionCapabilities.additionalDirectories`: the roots given to
    `session/new` are read without asking and listed; a `session/resume` that names none
    activates none (the spec's explicit list), so the same read asks again."""
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "note.txt").write_text("from the extra root")
    spec = script(tmp_path, call("read_file", path=str(extra / "note.txt")), DONE)
    data = tmp_path / "data"
    argv = ("--model", spec, "--data-dir", str(data))
    first = ToolClient()
    async with running_agent(*argv, client=first) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=str(ws), additional_directories=[str(extra)])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("read it")])
        listed = await conn.list_sessions(cwd=str(ws))
    assert first.permission_requests == []
    [(_, status, text)] = first.finished()
    assert (status, text) == ("completed", "from the extra root")
    assert [s.additional_directories for s in listed.sessions] == [[str(extra)]]
    again = ToolClient(["reject_once"])
    async with running_agent(*argv, client=again) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        await conn.resume_session(session_id=new.session_id, cwd=str(ws))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("read it")])
    assert again.asked_titles == [f"Read {extra / 'note.txt'} (outside the workspace)"]
