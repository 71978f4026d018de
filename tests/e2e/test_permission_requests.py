"""Permission requests through the real `acp-server` and the official SDK client: the four
options, reject and cancelled answers, "always" answers per kind that survive a reload, and a
cancel while a request is pending.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from tests.support.processes import WAIT_S
from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    ToolClient,
    agent_session,
    call,
    cancel_requests,
    prompt_and_then,
)

pytestmark = [
    pytest.mark.anyio,
    # Process groups, the subreaper and /proc: the runner's guarantees are Linux ones.
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


async def test_allow_once_runs_the_tool_after_asking_with_four_options(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient(["allow_once"])) as s:
        assert await s.prompt() == "end_turn"
    (tool_call, options), *more = s.client.permission_requests
    assert more == []
    [announced] = s.client.kinds("tool_call")
    assert tool_call.tool_call_id == announced.tool_call_id
    assert (announced.kind, announced.status, announced.raw_input) == (
        "edit",
        "pending",
        {"path": "a.txt", "content": "hi"},
    )
    assert [loc.path for loc in announced.locations] == [str(ws / "a.txt")]
    assert [o.kind for o in options] == [
        "reject_once",
        "allow_once",
        "allow_always",
        "reject_always",
    ]
    assert s.client.finished() == [("Write a.txt", "completed", f"Created {ws}/a.txt (1 line)")]
    statuses = [u.status for u in s.client.kinds("tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    assert (ws / "a.txt").read_text() == "hi"


@pytest.mark.parametrize("answer", ["reject_once", "cancelled"])
async def test_reject_or_cancelled_answer_refuses_the_tool_and_the_turn_goes_on(
    tmp_path: Path, ws: Path, answer: str
) -> None:
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient([answer])) as s:
        assert await s.prompt() == "end_turn"
    assert len(s.client.permission_requests) == 1
    [(title, status, text)] = s.client.finished()
    assert (title, status) == ("Write a.txt", "failed")
    assert text.startswith("denied:")
    assert "in_progress" not in [u.status for u in s.client.kinds("tool_call_update")]
    assert not (ws / "a.txt").exists()
    # The model was asked again with the refusal and answered.
    assert [u.content.text for u in s.client.kinds("agent_message_chunk")] == ["done"]


@pytest.mark.parametrize(
    ("answer", "status"), [("allow_always", "completed"), ("reject_always", "failed")]
)
async def test_always_answers_hold_for_later_prompts_and_after_a_reload(
    tmp_path: Path, ws: Path, answer: str, status: str
) -> None:
    data = tmp_path / "data"
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient([answer]), data_dir=data) as s:
        assert await s.prompt() == "end_turn"
        assert await s.prompt() == "end_turn"
        sid = s.sid
    assert len(s.client.permission_requests) == 1
    assert [st for _, st, _ in s.client.finished()] == [status, status]
    assert (ws / "a.txt").exists() == (status == "completed")

    async with agent_session(ws, spec, data_dir=data, load=sid) as again:
        before = len(again.client.finished())
        assert await again.prompt() == "end_turn"
    assert again.client.permission_requests == []  # persisted with the session
    assert [st for _, st, _ in again.client.finished()[before:]] == [status]


async def test_always_allow_is_per_tool_kind(tmp_path: Path, ws: Path) -> None:
    spec = script(
        tmp_path,
        call("write_file", path="a.txt", content="1"),
        call("write_file", path="b.txt", content="2"),
        call("bash", command="echo ran"),
        DONE,
    )
    client = ToolClient(["allow_always", "reject_once"])
    async with agent_session(ws, spec, client=client) as s:
        assert await s.prompt() == "end_turn"
    # The second edit ran without asking; the command (another kind) was asked about.
    assert s.client.asked_titles == ["Write a.txt", "Run `echo ran` (not sandboxed)"]
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed", "failed"]


async def test_cancel_while_a_permission_request_is_pending_cancels_that_request(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient(hold_permission=True)) as s:

        async def cancel_when_asked() -> None:
            with anyio.fail_after(WAIT_S):
                await s.client.asked.wait()
            await s.conn.cancel(session_id=s.sid)

        stop, _ = await prompt_and_then(s, cancel_when_asked)
    assert stop == "cancelled"
    asked = next(f for f in s.frames.received if f.get("method") == "session/request_permission")
    assert cancel_requests(s.frames) == [asked["id"]]
    assert not (ws / "a.txt").exists()


# --------------------------------------------------------------------------- modes
