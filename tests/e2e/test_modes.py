"""Modes through the real `acp-server` and the official SDK client: what each mode asks,
allows and refuses, bypass refused to root, and switching by set_mode, the `mode` config option
or the `/mode` command.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError

from tests.support.agent_process import SERVER
from tests.support.command_sandbox import offered_mode_ids
from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    SANDBOXED,
    ToolClient,
    agent_session,
    call,
    mode_option,
)

pytestmark = [
    pytest.mark.anyio,
    # Process groups, the subreaper and /proc: the runner's guarantees are Linux ones.
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


WRITE_AND_RUN = (
    call("write_file", path="a.txt", content="hi"),
    call("bash", command="echo ran > b.txt"),
    DONE,
)


async def test_default_mode_asks_before_edits_and_commands(tmp_path: Path, ws: Path) -> None:
    client = ToolClient(["allow_once", "allow_once"])
    async with agent_session(ws, script(tmp_path, *WRITE_AND_RUN), client=client) as s:
        assert s.new.modes is not None and s.new.modes.current_mode_id == "default"
        assert await s.prompt() == "end_turn"
    assert s.client.asked_titles == ["Write a.txt", "Run `echo ran > b.txt` (not sandboxed)"]
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed"]
    assert (ws / "b.txt").read_text() == "ran\n"


async def test_accept_edits_writes_without_asking_but_asks_before_commands(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, *WRITE_AND_RUN)
    async with agent_session(ws, spec, "--mode", "accept_edits", client=ToolClient()) as s:
        assert await s.prompt() == "end_turn"
    # answered reject_once
    assert s.client.asked_titles == ["Run `echo ran > b.txt` (not sandboxed)"]
    assert [st for _, st, _ in s.client.finished()] == ["completed", "failed"]
    assert (ws / "a.txt").read_text() == "hi"
    assert not (ws / "b.txt").exists()


async def test_read_only_refuses_edits_and_commands_without_asking_but_reads(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "notes.txt").write_text("keep me")
    spec = script(tmp_path, *WRITE_AND_RUN[:2], call("read_file", path="notes.txt"), DONE)
    async with agent_session(ws, spec, "--mode", "read_only") as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    finished = s.client.finished()
    assert [(title, st) for title, st, _ in finished] == [
        ("Write a.txt", "failed"),
        ("Run `echo ran > b.txt`", "failed"),
        ("Read notes.txt", "completed"),
    ]
    assert all("read-only" in text for _, _, text in finished[:2])
    assert finished[2][2] == "keep me"
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()


async def test_bypass_runs_edits_and_commands_without_asking(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, *WRITE_AND_RUN)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:
        assert s.new.modes is not None and s.new.modes.current_mode_id == "bypass"
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed"]
    assert (ws / "a.txt").read_text() == "hi" and (ws / "b.txt").read_text() == "ran\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="bypass is refused only to root")
@pytest.mark.usefixtures("not_sandboxed")
async def test_bypass_is_refused_to_root_without_the_sandbox_variable(
    tmp_path: Path, ws: Path
) -> None:
    async with agent_session(ws, script(tmp_path, DONE)) as s:
        with pytest.raises(RequestError) as by_mode:
            await s.conn.set_session_mode(session_id=s.sid, mode_id="bypass")
        with pytest.raises(RequestError) as by_option:
            await s.conn.set_config_option(config_id="mode", session_id=s.sid, value="bypass")
        assert await s.prompt("/mode bypass") == "end_turn"
    for caught in (by_mode, by_option):
        assert caught.value.code == -32602
        assert "root" in str(caught.value.data) and "ACP_SERVER_SANDBOXED" in str(caught.value.data)
    assert s.client.kinds("current_mode_update") == []
    [answer] = s.client.kinds("agent_message_chunk")
    assert answer.content.text.startswith("The mode was not changed") and "root" in (
        answer.content.text
    )
    # Nor from the command line.
    with anyio.fail_after(30):
        refused = await anyio.run_process(
            [SERVER, "--model", "echo", "--mode", "bypass"], input=b"", check=False
        )
    assert refused.returncode == 2 and b"ACP_SERVER_SANDBOXED" in refused.stderr


def wire_mode(update: dict[str, Any]) -> str:
    """The mode a `current_mode_update` or `config_option_update` payload announces."""
    if "currentModeId" in update:
        return str(update["currentModeId"])
    [option] = [o for o in update["configOptions"] if o["id"] == "mode"]
    return str(option["currentValue"])


async def test_set_mode_and_set_config_option_announce_the_mode_both_ways(
    tmp_path: Path, ws: Path
) -> None:
    async with agent_session(ws, script(tmp_path, DONE)) as s:
        modes = s.new.modes
        assert modes is not None and modes.current_mode_id == "default"
        ids = offered_mode_ids()
        assert [m.id for m in modes.available_modes] == ids
        assert mode_option(s.new.config_options) == ("default", ids)

        await s.conn.set_session_mode(session_id=s.sid, mode_id="read_only")
        answer = await s.conn.set_config_option(
            config_id="mode", session_id=s.sid, value="accept_edits"
        )
        assert mode_option(answer.config_options) == ("accept_edits", ids)
        with pytest.raises(RequestError) as unknown:
            await s.conn.set_session_mode(session_id=s.sid, mode_id="yolo")
    assert unknown.value.code == -32602
    shown = [
        (u["sessionUpdate"], wire_mode(u))
        for u in s.wire_updates("current_mode_update") + s.wire_updates("config_option_update")
    ]
    assert sorted(shown) == sorted(
        [
            ("current_mode_update", "read_only"),
            ("current_mode_update", "accept_edits"),
            ("config_option_update", "read_only"),
            ("config_option_update", "accept_edits"),
        ]
    )
    order = [
        u.session_update
        for _, u in s.client.updates
        if u.session_update in ("current_mode_update", "config_option_update")
    ]
    assert order == ["current_mode_update", "config_option_update"] * 2


async def test_mode_slash_command_switches_without_calling_the_model(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec) as s:
        assert await s.prompt("/mode read_only") == "end_turn"
        assert s.client.kinds("tool_call") == []  # the model was not asked
        assert [u.current_mode_id for u in s.client.kinds("current_mode_update")] == ["read_only"]
        assert [u.content.text for u in s.client.kinds("agent_message_chunk")] == [
            "Mode set to read_only."
        ]
        assert await s.prompt() == "end_turn"  # the script's first response: write_file
    [commands] = s.client.kinds("available_commands_update")
    assert "mode" in [c.name for c in commands.available_commands]
    assert s.client.permission_requests == []
    assert [(title, st) for title, st, _ in s.client.finished()] == [("Write a.txt", "failed")]
    assert not (ws / "a.txt").exists()
