"""What the client is shown of tool calls, live and after `session/load`: diffs of writes and
edits, the plan from todo_write, and the mode, through the real `acp-server`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    agent_session,
    call,
    mode_option,
)

pytestmark = [
    pytest.mark.anyio,
    # Process groups, the subreaper and /proc: the runner's guarantees are Linux ones.
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


async def test_write_and_edit_carry_diff_content(tmp_path: Path, ws: Path) -> None:
    spec = script(
        tmp_path,
        call("write_file", path="a.txt", content="one\ntwo\n"),
        call("edit_file", path="a.txt", old_text="two", new_text="three"),
        call("write_file", path="a.txt", content="four\n"),
        DONE,
    )
    async with agent_session(ws, spec, "--mode", "accept_edits") as s:
        assert await s.prompt() == "end_turn"
    path = str(ws / "a.txt")
    diffs = [
        [c for c in u["content"] if c["type"] == "diff"]
        for u in s.wire_updates("tool_call_update")
        if u["status"] == "completed"
    ]
    assert [[(d["path"], d.get("oldText"), d["newText"]) for d in ds] for ds in diffs] == [
        [(path, None, "one\ntwo\n")],
        [(path, "one\ntwo\n", "one\nthree\n")],
        [(path, "one\nthree\n", "four\n")],
    ]
    assert (ws / "a.txt").read_text() == "four\n"


PLAN = [
    {"content": "read the code", "status": "completed", "priority": "high"},
    {"content": "fix the bug", "status": "in_progress"},
    {"content": "write a test", "priority": "low"},
]
PLAN_SHOWN = [
    {"content": "read the code", "priority": "high", "status": "completed"},
    {"content": "fix the bug", "priority": "medium", "status": "in_progress"},
    {"content": "write a test", "priority": "low", "status": "pending"},
]


async def test_todo_write_sends_a_plan_update_with_its_entries(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, call("todo_write", entries=PLAN), DONE)
    async with agent_session(ws, spec, "--mode", "read_only") as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    [plan] = s.wire_updates("plan")
    assert plan["entries"] == PLAN_SHOWN
    [(title, status, text)] = s.client.finished()
    assert (title, status) == ("Update plan", "completed")
    assert text.startswith("Plan updated: 3 entries")


async def test_load_replays_diffs_the_plan_and_the_mode(tmp_path: Path, ws: Path) -> None:
    data = tmp_path / "data"
    spec = script(
        tmp_path,
        call("write_file", path="a.txt", content="one\n"),
        call("edit_file", path="a.txt", old_text="one", new_text="two"),
        call("todo_write", entries=PLAN),
        DONE,
    )
    async with agent_session(ws, spec, data_dir=data) as s:
        await s.conn.set_session_mode(session_id=s.sid, mode_id="accept_edits")
        assert await s.prompt() == "end_turn"
        live_diffs = [
            c
            for u in s.wire_updates("tool_call_update")
            for c in u.get("content", [])
            if c["type"] == "diff"
        ]
    async with agent_session(ws, spec, data_dir=data, load=s.sid) as loaded:
        assert loaded.new.modes.current_mode_id == "accept_edits"
        assert mode_option(loaded.new.config_options)[0] == "accept_edits"
        replayed_diffs = [
            c
            for u in loaded.wire_updates("tool_call_update")
            for c in u.get("content", [])
            if c["type"] == "diff"
        ]
        assert [u["currentModeId"] for u in loaded.wire_updates("current_mode_update")] == [
            "accept_edits"
        ]
        assert [p["entries"] for p in loaded.wire_updates("plan")] == [PLAN_SHOWN]
        # Still accept_edits after the load: the next edit runs without asking.
        assert await loaded.prompt() == "end_turn"
    path = str(ws / "a.txt")
    assert [(d["path"], d.get("oldText"), d["newText"]) for d in replayed_diffs] == [
        (path, None, "one\n"),
        (path, "one\n", "two\n"),
    ]
    assert replayed_diffs == live_diffs
    assert loaded.client.permission_requests == []
