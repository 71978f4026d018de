"""Tool processes through the real `acp-server` and the official SDK client: a cancel reaps
the whole bash process tree before the prompt answers, a bash timeout reaps it and says so.

Models are scripted (`--model script:PATH`): a `tool_call` event makes the loop run the tool
and ask the model again, which takes the script's next response.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.support.processes import existing, wait_for_pids
from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    SANDBOXED,
    agent_session,
    call,
    prompt_and_then,
)

pytestmark = [
    pytest.mark.anyio,
    # Process groups, the subreaper and /proc: the runner's guarantees are Linux ones.
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


@pytest.mark.parametrize(
    ("trap", "lines"),
    [("", 3), ("trap '' TERM; ", 2)],
    ids=["respects-sigterm", "traps-sigterm"],
)
async def test_cancel_reaps_the_whole_bash_process_tree_before_answering(
    tmp_path: Path, ws: Path, trap: str, lines: int
) -> None:
    pidfile = tmp_path / "pids"
    background = f"sleep 300 & echo $! >> {pidfile}; "
    command = f"{trap}echo $$ >> {pidfile}; {background * (lines - 1)}wait"
    spec = script(tmp_path, call("bash", command=command), DONE)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:
        pids: list[int] = []
        cancelled_at: list[float] = []

        async def cancel_once_running() -> None:
            pids.extend(await wait_for_pids(pidfile, lines))
            assert existing(pids) == pids
            cancelled_at.append(time.monotonic())
            await s.conn.cancel(session_id=s.sid)

        stop, (survivors, elapsed) = await prompt_and_then(
            s,
            cancel_once_running,
            lambda: (existing(pids), time.monotonic() - cancelled_at[0]),
        )
        assert stop == "cancelled"
        assert survivors == []  # the group was reaped before the prompt was answered
        assert [status for _, status, _ in s.client.finished()] == ["failed"]
        assert s.client.permission_requests == []
        if trap:
            assert elapsed >= 1.5  # SIGTERM ignored: SIGKILL after the 2 s grace period
        # The session lives on: the next prompt takes the script's next response.
        assert await s.prompt() == "end_turn"


async def test_a_bash_timeout_reaps_the_tree_and_reports_it(tmp_path: Path, ws: Path) -> None:
    pidfile = tmp_path / "pids"
    command = f"echo $$ >> {pidfile}; sleep 300 & echo $! >> {pidfile}; wait"
    spec = script(tmp_path, call("bash", command=command, timeout_ms=500), DONE)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:
        assert await s.prompt() == "end_turn"
        assert existing(await wait_for_pids(pidfile, 2)) == []
    [(_, status, text)] = s.client.finished()
    assert status == "failed"
    assert "[timed out after 0.5 s; the command was killed]" in text
