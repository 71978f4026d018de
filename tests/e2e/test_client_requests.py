"""The client's fs and terminals vs the local machine, through the real `acp-server` and the
official SDK client: files through `fs/*` when offered, bash in a client terminal, and a
terminal released whatever happens to the wait or the turn.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import anyio
import pytest
from acp.schema import (
    ClientCapabilities,
)

from tests.support.processes import WAIT_S
from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    FS,
    FS_AND_TERMINAL,
    SANDBOXED,
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


async def test_file_tools_go_through_the_client_fs_when_it_offers_it(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "a.txt").write_text("on disk")
    buffers = {str(ws / "a.txt"): "unsaved buffer"}
    spec = script(
        tmp_path,
        call("read_file", path="a.txt"),
        call("write_file", path="b.txt", content="new"),
        DONE,
    )
    caps = ClientCapabilities(fs=FS)
    client = ToolClient(buffers=buffers)
    async with agent_session(ws, spec, "--mode", "accept_edits", client=client, caps=caps) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.calls == [
        ("fs/read_text_file", str(ws / "a.txt")),
        ("fs/write_text_file", str(ws / "b.txt")),  # new on disk: no read for a diff
    ]
    finished = s.client.finished()
    assert [(title, st) for title, st, _ in finished] == [
        ("Read a.txt", "completed"),
        ("Write b.txt", "completed"),
    ]
    assert finished[0][2] == "unsaved buffer"  # what the model got back
    assert s.client.buffers[str(ws / "b.txt")] == "new"
    assert (ws / "a.txt").read_text() == "on disk"
    assert not (ws / "b.txt").exists()


async def test_file_tools_use_the_local_disk_without_fs_capabilities(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "a.txt").write_text("on disk")
    spec = script(
        tmp_path,
        call("read_file", path="a.txt"),
        call("write_file", path="b.txt", content="new"),
        DONE,
    )
    client = ToolClient(buffers={str(ws / "a.txt"): "unsaved buffer"})
    async with agent_session(ws, spec, "--mode", "accept_edits", client=client) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.calls == []
    [(_, _, read), _] = s.client.finished()
    assert read == "on disk"
    assert (ws / "b.txt").read_text() == "new"


async def test_bash_runs_in_a_client_terminal_when_it_offers_one(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, call("bash", command="echo hello from $PWD"), DONE)
    client = ToolClient()
    async with agent_session(
        ws, spec, "--mode", "bypass", client=client, caps=FS_AND_TERMINAL, env=SANDBOXED
    ) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.calls == [
        ("terminal/create", "term_1"),
        ("terminal/wait_for_exit", "term_1"),
        ("terminal/output", "term_1"),
        ("terminal/release", "term_1"),
    ]
    created = next(f for f in s.frames.received if f.get("method") == "terminal/create")
    assert created["params"]["cwd"] == str(ws)
    [done] = [u for u in s.wire_updates("tool_call_update") if u["status"] == "completed"]
    assert {"type": "terminal", "terminalId": "term_1"} in done["content"]
    [(_, _, text)] = s.client.finished()
    assert f"hello from {ws}" in text and "[exit code: 0]" in text


async def test_a_failing_terminal_wait_still_releases_the_terminal(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("bash", command="sleep 300"), DONE)
    client = ToolClient(fail_wait=True)
    async with agent_session(
        ws, spec, "--mode", "bypass", client=client, caps=FS_AND_TERMINAL, env=SANDBOXED
    ) as s:
        assert await s.prompt() == "end_turn"
    methods = [method for method, _ in s.client.calls]
    assert methods[:2] == ["terminal/create", "terminal/wait_for_exit"]
    assert methods[-1] == "terminal/release"
    assert [st for _, st, _ in s.client.finished()] == ["failed"]
    assert s.client.spawned[0].returncode is not None  # released terminals are killed


async def test_cancel_during_a_terminal_wait_cancels_the_request_kills_and_releases(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("bash", command="sleep 300"), DONE)
    client = ToolClient()
    async with agent_session(
        ws, spec, "--mode", "bypass", client=client, caps=FS_AND_TERMINAL, env=SANDBOXED
    ) as s:

        async def cancel_while_waiting() -> None:
            with anyio.fail_after(WAIT_S):
                await s.client.waiting.wait()
            await s.conn.cancel(session_id=s.sid)

        stop, calls = await prompt_and_then(s, cancel_while_waiting, lambda: list(client.calls))
    assert stop == "cancelled"
    assert calls == [
        ("terminal/create", "term_1"),
        ("terminal/wait_for_exit", "term_1"),
        ("terminal/kill", "term_1"),
        ("terminal/output", "term_1"),
        ("terminal/release", "term_1"),
    ]
    waited = next(f for f in s.frames.received if f.get("method") == "terminal/wait_for_exit")
    assert cancel_requests(s.frames) == [waited["id"]]
    assert s.client.spawned[0].returncode == -signal.SIGKILL
    assert [st for _, st, _ in s.client.finished()] == ["failed"]
