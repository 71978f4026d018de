"""bash (acp_server/tools/builtin/shell.py) on real processes: output and exit code, the
timeout, and the turn signal stopping the whole process group.
"""

from __future__ import annotations

import os
import signal as signals
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.tools.base import ProcessExit
from tests.support.processes import existing
from tests.support.tool_call import RecordedCall
from tests.support.tool_workspace import Workspace
from tests.support.turns import fresh_signal

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("module_subreaper")]

HANG_GUARD_S = 60.0
"""A guard against a hang only; the tests wait for events, not for time."""


async def test_bash_output_and_exit_code(ws: Workspace) -> None:
    ws.file("here.txt", "")
    ok = await ws.run("bash", command="ls && echo done")
    assert not ok.failed
    assert ok.text == "here.txt\ndone\n[exit code: 0]"
    assert ok.terminal_id is None

    bad = await ws.run("bash", command="echo out; echo err >&2; exit 3")
    assert bad.failed
    assert bad.text == "out\nstderr:\nerr\n[exit code: 3]"
    assert bad.process_exit == ProcessExit(3)  # what the test loop reads, not the text

    quiet = await ws.run("bash", command="true")
    assert quiet.text == "(no output)\n[exit code: 0]"


async def test_bash_times_out(ws: Workspace) -> None:
    pids_file = ws.root / "pids"
    command = f"echo started; sleep 300 & echo $! > {pids_file}; wait"
    with anyio.fail_after(HANG_GUARD_S):  # without the timeout the command runs 300 s
        output = await ws.run("bash", command=command, timeout_ms=300)
    assert output.failed
    assert "timed out after 0.3 s" in output.text
    assert output.process_exit is not None and output.process_exit.timed_out
    assert existing([int(pids_file.read_text())]) == []


async def test_bash_cancelled_by_the_signal_kills_the_whole_group(ws: Workspace) -> None:
    pids_file = ws.root / "pids"
    command = f"echo $$ > {pids_file}; sleep 300 & echo $! >> {pids_file}; "
    command += f"sleep 300 & echo $! >> {pids_file}; wait"
    cancellation = TurnCancellation()

    async def cancel_once_all_started() -> None:
        while not (pids_file.exists() and len(pids_file.read_text().split()) == 3):  # noqa: ASYNC110
            await anyio.sleep(0.01)
        cancellation.abort(UserCancel())

    with anyio.fail_after(HANG_GUARD_S):  # without the kill the command runs 300 s
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once_all_started)
            with pytest.raises(TurnAborted):
                await ws.run("bash", signal=cancellation.signal, command=command)
    pids = [int(line) for line in pids_file.read_text().split()]
    assert len(pids) == 3
    alive = existing(pids)
    if alive:  # clean up before failing
        for pid in alive:
            os.kill(pid, signals.SIGKILL)
    assert alive == []


async def test_bash_with_an_empty_command_fails(ws: Workspace) -> None:
    output = await ws.run("bash", command="  ")
    assert output.failed and "command is empty" in output.text


class ReleasingCall(RecordedCall):
    """A call whose first progress lets the command end (it waits for `flag`)."""

    def __init__(self, flag: Path) -> None:
        super().__init__()
        self.flag = flag

    async def progress(self, text: str) -> None:
        await super().progress(text)
        self.flag.touch()


async def test_a_running_command_is_shown_on_the_call_it_serves(ws: Workspace) -> None:
    """Through the one entry point: the command's output so far reaches the call's progress
    while it runs (it only ends once some did), escaped for the editor."""
    flag = ws.root / "flag"
    call = ReleasingCall(flag)
    command = "printf 'working\\033[2J\\n'; while [ ! -e flag ]; do sleep 0.02; done; echo done"
    with anyio.fail_after(HANG_GUARD_S):
        output = await ws.tools["bash"].run({"command": command}, call, fresh_signal())
    assert output.text == "working\x1b[2J\ndone\n[exit code: 0]"
    assert call.progress_texts[0] == "working\\x1b[2J\n"
