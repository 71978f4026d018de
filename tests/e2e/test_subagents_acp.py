"""The `task` tool through the real `acp-server` process and the official SDK client.

The parent's scripted model calls `task`; the child follows the script's `subagent` responses.
Cancelling the parent cancels the child (its journal ends with an aborted `turn/end`, its
`bash` process group is reaped before the prompt is answered); a finished child's final message
is the parent's tool result, and the child's own tool calls never reach the client as tool
calls (only as progress on the parent's `task` call).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block
from acp.schema import DeniedOutcome, RequestPermissionResponse

from tests.support.agent_process import RecordingClient, running_agent
from tests.support.processes import alive

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

SANDBOXED = {"ACP_SERVER_SANDBOXED": "1"}
WAIT_S = 10.0
HANG_GUARD_S = 30.0
"""Only a server that never exits takes this long; it is no measure of speed."""


class Client(RecordingClient):
    """Records updates; refuses (and counts) permission requests, which bypass never sends."""

    def __init__(self) -> None:
        super().__init__()
        self.permission_requests = 0

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        self.permission_requests += 1
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def kinds(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]


def write_script(tmp_path: Path, parent: list[Any], child: list[Any]) -> str:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"responses": parent, "subagent": {"responses": child}}))
    return f"script:{path}"


def workspace(tmp_path: Path) -> str:
    path = tmp_path / "ws"
    path.mkdir()
    return os.path.realpath(path)


@asynccontextmanager
async def session(tmp_path: Path, spec: str) -> AsyncIterator[tuple[Any, str, Client, Path]]:
    ws = workspace(tmp_path)
    data = tmp_path / "data"
    client = Client()
    argv = ["--model", spec, "--mode", "bypass", "--data-dir", str(data)]
    async with running_agent(*argv, client=client, env=SANDBOXED) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        new = await conn.new_session(cwd=ws, mcp_servers=[])
        yield conn, new.session_id, client, data


def journal(data: Path, session_id: str) -> list[dict[str, Any]]:
    path = data / "sessions" / f"{session_id}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def read_pid(path: Path) -> int | None:
    text = path.read_text().split() if path.exists() else []
    return int(text[0]) if text else None


async def wait_for_pid(path: Path) -> int:
    with anyio.fail_after(WAIT_S):
        while True:
            pid = read_pid(path)
            if pid is not None:
                return pid
            await anyio.sleep(0.01)


async def test_cancelling_the_parent_aborts_the_child_and_reaps_its_processes(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pids"
    spec = write_script(
        tmp_path,
        [
            [{"tool_call": {"name": "task", "arguments": {"prompt": "go"}}}],
            [{"text": "parent done"}],
        ],
        [
            [
                {
                    "tool_call": {
                        "name": "bash",
                        "arguments": {"command": f"sleep 300 & echo $! >> {pidfile}; wait"},
                    }
                }
            ],
            [{"text": "child done"}],
        ],
    )
    async with session(tmp_path, spec) as (conn, sid, client, data):
        stops: list[tuple[str, bool]] = []
        async with anyio.create_task_group() as tg:
            pid_box: list[int] = []

            async def ask() -> None:
                response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
                stops.append((str(response.stop_reason), alive(pid_box[0])))

            tg.start_soon(ask)
            pid_box.append(await wait_for_pid(pidfile))
            assert alive(pid_box[0])
            await conn.cancel(session_id=sid)
        [(stop, still_alive)] = stops
        assert stop == "cancelled"
        assert not still_alive  # the child's process group was reaped before the answer
        child = journal(data, f"{sid}.task1")
        assert child[0]["parent_session_id"] == sid
        [task_call] = client.kinds("tool_call")
        assert child[0]["parent_tool_call_id"] == task_call.tool_call_id  # ours, not `call_1`
        assert child[-1]["type"] == "turn/end"
        assert child[-1]["outcome"] == {"kind": "aborted"}
        parent = journal(data, sid)
        assert [r["outcome"] for r in parent if r.get("type") == "turn/end"] == [
            {"kind": "aborted"}
        ]
        # Only the parent's own call reached the client as a tool call.
        assert task_call.title == "task: go"
        assert client.permission_requests == 0
        # The session lives on, and the child session is not listed as a session of its own.
        listed = await conn.list_sessions()
        assert [s.session_id for s in listed.sessions] == [sid]


async def test_a_finished_child_answers_the_parent_tool_call(tmp_path: Path) -> None:
    spec = write_script(
        tmp_path,
        [
            [{"tool_call": {"name": "task", "arguments": {"prompt": "go", "description": "look"}}}],
            [{"text": "parent done"}],
        ],
        [
            [{"tool_call": {"name": "bash", "arguments": {"command": "echo hi"}}}],
            [{"text": "child done"}],
        ],
    )
    async with session(tmp_path, spec) as (conn, sid, client, data):
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
        [announced] = client.kinds("tool_call")
        assert announced.title == "task: look" and announced.kind == "think"
        updates = [
            u for u in client.kinds("tool_call_update") if u.tool_call_id == announced.tool_call_id
        ]
        texts = [
            "".join(c.content.text for c in u.content or [] if c.type == "content") for u in updates
        ]
        assert any(t.startswith("running bash") for t in texts)  # progress from the child
        assert updates[-1].status == "completed" and texts[-1] == "child done"
        child = journal(data, f"{sid}.task1")
        assert child[-1]["outcome"] == {"kind": "completed"}
        results = [r for r in child if r.get("type") == "tool/result"]
        assert results and results[0]["status"] == "completed"


async def test_shutting_the_server_down_disposes_the_child(tmp_path: Path) -> None:
    # SIGTERM disposes every session: the parent's turn and its child's end `disposed`
    # (disposal wins), the child's process is reaped, and the server exits 0 within 2 s.
    pidfile = tmp_path / "pids"
    spec = write_script(
        tmp_path,
        [[{"tool_call": {"name": "task", "arguments": {"prompt": "go"}}}]],
        [
            [
                {
                    "tool_call": {
                        "name": "bash",
                        "arguments": {"command": f"sleep 300 & echo $! >> {pidfile}; wait"},
                    }
                }
            ]
        ],
    )
    ws = workspace(tmp_path)
    data = tmp_path / "data"
    argv = ["--model", spec, "--mode", "bypass", "--data-dir", str(data)]
    async with running_agent(*argv, client=Client(), env=SANDBOXED) as (conn, process, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=ws, mcp_servers=[])).session_id
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                await conn.prompt(session_id=sid, prompt=[text_block("go")])

            tg.start_soon(ask)
            child_pid = await wait_for_pid(pidfile)
            process.terminate()
            # No bound on how fast: the server's own 2 s watchdog guarantees the exit; the
            # journals below show the orderly disposal ran (the watchdog would leave no end).
            with anyio.fail_after(HANG_GUARD_S):
                assert await process.wait() == 0
            tg.cancel_scope.cancel()
    assert not alive(child_pid)
    parent_end = [r for r in journal(data, sid) if r.get("type") == "turn/end"]
    child_end = [r for r in journal(data, f"{sid}.task1") if r.get("type") == "turn/end"]
    assert parent_end[-1]["outcome"] == {"kind": "disposed"}
    assert child_end[-1]["outcome"] == {"kind": "disposed"}
