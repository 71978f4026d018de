"""The keeper (acp_server/process/keeper.py): a command's tree dies with the process that
started it, even when that process is killed with SIGKILL; while it lives, the keeper changes
nothing the caller sees. Real processes; the "agent" is tests/support/spawner.py, killed with
SIGKILL, and survivors are found by their marks in /proc (tests/support/survivors.py)."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnCancellation, UserCancel
from acp_server.process import ProcessRegistry, become_subreaper, run_process, spawn
from tests.support.programs import SPAWNER
from tests.support.survivors import ESCAPES, Escapee

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="the keeper is Linux's"),
]

DEADLINE = 20.0
_PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(autouse=True, scope="module")
def subreaper() -> Iterator[None]:
    """As the server does at start-up (a double-forked child comes back to us); undone
    afterwards so that other test modules' orphans keep going to init."""
    enabled = become_subreaper()
    yield
    if enabled:
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


@pytest.fixture
def escapee(tmp_path: Path) -> Iterator[Escapee]:
    escapee = Escapee(tmp_path)
    yield escapee
    for pid in escapee.survivors():  # what a failing test left
        os.kill(pid, signal.SIGKILL)


@contextmanager
def spawner(script: str, keeper: bool) -> Iterator[subprocess.Popen[bytes]]:
    """The stand-in agent, once its child runs; killed at the end if the test did not."""
    argv = [sys.executable, SPAWNER, script, *(["--keeper"] if keeper else [])]
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE) as agent:
        assert agent.stderr is not None
        assert agent.stderr.readline() == b"started\n"
        try:
            yield agent
        finally:
            agent.kill()


async def wait_until_gone(escapee: Escapee) -> None:
    with anyio.fail_after(DEADLINE):
        while escapee.survivors():  # noqa: ASYNC110 - other processes' fate, read from /proc
            await anyio.sleep(0.02)


@pytest.mark.parametrize("how", ESCAPES)
@pytest.mark.parametrize("trap", ["", "trap '' TERM; "], ids=["obeys-term", "ignores-term"])
async def test_the_tree_dies_with_an_agent_killed_by_sigkill(
    tmp_path: Path, escapee: Escapee, how: str, trap: str
) -> None:
    # The command itself, a background child in its group, and a child that left the group
    # (or the tree) all carry the mark; with `trap`, SIGTERM is ignored and only SIGKILL works.
    mark = escapee.mark
    script = (
        f"{trap}{escapee.command(how, tmp_path / 'ready')}; "
        f"{mark} {escapee.path} 300 & {mark} exec {escapee.path} 301"
    )
    with spawner(script, keeper=True) as agent:
        with anyio.fail_after(DEADLINE):
            while len(escapee.survivors()) < 3:  # noqa: ASYNC110 - the shell's children start
                await anyio.sleep(0.01)
        agent.kill()
    await wait_until_gone(escapee)
    assert escapee.survivors() == []


async def test_without_the_keeper_the_tree_outlives_an_agent_killed_by_sigkill(
    tmp_path: Path, escapee: Escapee
) -> None:
    # What the keeper is for (the measurement of the background-work RFC): each child leads
    # its own session, so nothing of the kernel's stops it when the agent dies.
    with spawner(f"{escapee.mark} exec {escapee.path} 300", keeper=False) as agent:
        with anyio.fail_after(DEADLINE):
            while not escapee.survivors():  # noqa: ASYNC110 - the shell execs the escapee
                await anyio.sleep(0.01)
        agent.kill()
    [pid] = escapee.survivors()
    assert os.getpgid(pid) == pid  # its own group, and now nobody's child of ours


async def test_under_the_keeper_the_caller_sees_what_it_saw_without(tmp_path: Path) -> None:
    script = "cat; echo out; echo err >&2; exit 3"
    with anyio.fail_after(DEADLINE):
        plain = await run_process(["bash", "-c", script], signal=None, registry=None, cwd="/")
        kept = await run_process(
            ["bash", "-c", script], signal=None, registry=None, cwd="/", keeper=True
        )
        killed = await run_process(
            ["bash", "-c", "kill -USR1 $$"], signal=None, registry=None, cwd="/", keeper=True
        )
    assert (kept.exit_code, kept.stdout, kept.stderr) == (3, "out\n", "err\n")
    assert (plain.exit_code, plain.stdout, plain.stderr) == (3, "out\n", "err\n")
    assert (killed.exit_code, killed.posix_signal) == (None, signal.SIGUSR1)


async def test_a_program_that_is_not_there_fails_to_start_as_without_the_keeper() -> None:
    with pytest.raises(FileNotFoundError, match="no-such-program"):
        async with spawn(["no-such-program"], registry=None, cwd="/", keeper=True):
            pass


async def test_the_turn_signal_stops_a_tree_under_the_keeper(
    tmp_path: Path, escapee: Escapee
) -> None:
    ready = tmp_path / "ready"
    turn = TurnCancellation()
    command = f"trap '' TERM; {escapee.command('double-fork', ready)}; sleep 300"

    async def abort_when_ready() -> None:
        while not ready.exists():  # noqa: ASYNC110 - polling another process's file
            await anyio.sleep(0.01)
        turn.abort(UserCancel())

    registry = ProcessRegistry()
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_when_ready)
            result = await run_process(
                ["bash", "-c", command],
                signal=turn.signal,
                registry=registry,
                cwd=str(tmp_path),
                grace=0.3,
                keeper=True,
            )
    assert result.aborted and result.survivors == []
    assert escapee.survivors() == []
    assert not registry.groups
