"""A sandboxed process tree is stopped by the bash timeout and by SIGTERM of the agent, as an
unsandboxed one is, through the real `acp-server` and the SDK client: nothing survives, found
in /proc by a unique name and environment mark (`tests/support/survivors.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from acp import text_block

from tests.support.agent_process import running_agent
from tests.support.command_sandbox import needs_bwrap
from tests.support.processes import wait_for_pids
from tests.support.scripted_model import script
from tests.support.survivors import Escapee
from tests.support.tool_client import DONE, ToolClient, call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux only"),
    needs_bwrap,
]

EXIT_S = 30.0
"""A guard against a hung agent, no bound on its speed: the exit within 2 s of SIGTERM is
the agent's own watchdog's promise, and a bound near it would fail when the watchdog works."""


def tree(ws: Path, escapee: Escapee) -> str:
    """A marked sleep tree with a `setsid` escapee that ignores SIGTERM, started inside the
    workspace (the sandbox's /tmp is its own); `started` holds a pid once it all runs."""
    ready = ws / "ready"
    return (
        f"trap '' TERM; export {escapee.mark}; sleep 300 & "
        f"{escapee.command('setsid', ready)}; echo $$ > {ws / 'started'}; wait"
    )


async def test_the_bash_timeout_stops_a_sandboxed_tree(tmp_path: Path, ws: Path) -> None:
    escapee = Escapee(ws)
    spec = script(tmp_path, call("bash", command=tree(ws, escapee), timeout_ms=1500), DONE)
    client = ToolClient()
    argv = ["--model", spec, "--mode", "sandboxed"]
    async with running_agent(*argv, client=client) as (conn, agent, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        survivors = escapee.survivors(unreaped_by=agent.pid)
    client.close()
    assert response.stop_reason == "end_turn"
    assert (ws / "started").exists(), "the timeout fired before the tree started"
    [(_, status, text)] = client.finished()
    assert status == "failed" and "[timed out after 1.5 s; the command was killed]" in text
    assert survivors == []


async def test_sigterm_of_the_agent_stops_a_sandboxed_tree(tmp_path: Path, ws: Path) -> None:
    escapee = Escapee(ws)
    spec = script(tmp_path, call("bash", command=tree(ws, escapee)), DONE)
    client = ToolClient()
    argv = ["--model", spec, "--mode", "sandboxed"]
    async with running_agent(*argv, client=client) as (conn, agent, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                # Disposal ends the turn; whether its answer is written before the exit is
                # not what this test is about.
                await conn.prompt(session_id=sid, prompt=[text_block("go")])

            tg.start_soon(ask)
            await wait_for_pids(ws / "started", 1)
            assert len(escapee.survivors()) >= 2  # the sleep and the escapee, at least
            agent.terminate()
            with anyio.fail_after(EXIT_S):
                assert await agent.wait() == 0
            tg.cancel_scope.cancel()
    client.close()
    assert escapee.survivors() == []
