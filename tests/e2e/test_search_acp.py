"""grep and glob on hostile input through the real `acp-server` process (issue 24, holes 9
and 10): a catastrophic regex (`(a+)+$` on a line of 60 `a`s) and a glob of many `*`
segments over two links to `.` freeze nothing. While one session runs them, its cancel is
answered, another session is created and completes the same calls, stdin EOF ends the agent
with status 0, and no `rg` process is left.

Before ripgrep, Python's `re` held the GIL for the whole backtracking search, so the agent
answered nothing at all (this test then fails at its `fail_after`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from acp import text_block

from acp_server.tools.builtin.ripgrep import ripgrep_binary
from tests.support.agent_process import running_agent
from tests.support.scripted_model import script
from tests.support.tool_client import DONE, ToolClient, call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's"),
]

WAIT_S = 60.0
"""A hang guard, not a timing assertion: the agent answers in well under a second."""
STARS = "/".join(["*"] * 20) + "/a.txt"


def rg_processes_in(ws: Path) -> list[int]:
    """Live processes running the package's `rg` with a working directory in `ws`."""
    binary = ripgrep_binary()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            exe = os.readlink(f"/proc/{name}/exe")
            cwd = os.readlink(f"/proc/{name}/cwd")
        except OSError:
            continue
        if exe == binary and (cwd == str(ws) or cwd.startswith(f"{ws}/")):
            found.append(int(name))
    return found


async def test_hostile_patterns_block_no_cancel_no_session_and_no_eof(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "a.txt").write_text("a" * 60 + "!\n")
    (ws / "l1").symlink_to(".")
    (ws / "l2").symlink_to(".")
    spec = script(tmp_path, call("grep", pattern="(a+)+$"), call("glob", pattern=STARS), DONE)
    client = ToolClient()
    stops: dict[str, str] = {}
    with anyio.fail_after(WAIT_S):
        async with running_agent("--model", spec, client=client) as (conn, agent, _, _):
            await conn.initialize(protocol_version=1)
            first = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id

            async def prompt(sid: str) -> None:
                response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
                stops[sid] = str(response.stop_reason)

            async with anyio.create_task_group() as tg:
                tg.start_soon(prompt, first)
                while not any(  # until the grep call has been announced
                    sid == first and update.session_update == "tool_call"
                    for sid, update in client.updates
                ):
                    await client.wait_for_updates(len(client.updates) + 1, within=WAIT_S)
                await conn.cancel(session_id=first)
                second = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
                await prompt(second)
            assert stops[first] in ("cancelled", "end_turn")  # answered, however far it got
            assert stops[second] == "end_turn"
            results = [
                (update.status, "".join(c.content.text for c in update.content or []))
                for sid, update in client.updates
                if sid == second
                and update.session_update == "tool_call_update"
                and update.status in ("completed", "failed")
            ]
            assert results == [
                ("completed", f"No matches for `(a+)+$` in {ws}"),
                ("completed", f"No paths match `{STARS}`"),
            ]
            agent.stdin.close()  # EOF: the agent exits by itself
            assert await agent.wait() == 0
    assert rg_processes_in(ws) == []
