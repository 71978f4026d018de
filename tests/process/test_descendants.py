"""Descendants that leave the process group (`setsid`, `setpgid`, a double fork) die with the
call that started them: on a normal exit of the leader, on an abort, and when they ignore
SIGTERM; one that also clears its environment dies at shutdown; a closed registry starts
nothing. Real processes, found by their marks in /proc (tests/support/survivors.py)."""

from __future__ import annotations

import ctypes
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnCancellation, UserCancel
from acp_server.process import (
    ProcessRegistry,
    ProcessResult,
    RegistryClosed,
    become_subreaper,
    reap_orphans,
    run_process,
)
from acp_server.process.descendants import TOKEN_VARIABLE, is_same, read_stat
from tests.support.survivors import ESCAPES, Escapee

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="/proc and the subreaper are Linux's"),
]

DEADLINE = 20.0
_PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(autouse=True, scope="module")
def subreaper() -> Iterator[None]:
    """As the server does at start-up; undone afterwards so that other test modules'
    orphans keep going to init."""
    enabled = become_subreaper()
    yield
    if enabled:
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


@pytest.fixture
def escapee(tmp_path: Path) -> Escapee:
    return Escapee(tmp_path)


async def run(command: str, tmp_path: Path, **kwargs: object) -> ProcessResult:
    with anyio.fail_after(DEADLINE):
        return await run_process(
            ["bash", "-c", command],
            cwd=str(tmp_path),
            **kwargs,  # type: ignore[arg-type]
        )


@pytest.mark.parametrize("how", ESCAPES)
async def test_an_escapee_dies_when_its_leader_exits_by_itself(
    tmp_path: Path, escapee: Escapee, how: str
) -> None:
    registry = ProcessRegistry()
    result = await run(
        escapee.command(how, tmp_path / "ready"), tmp_path, signal=None, registry=registry
    )
    assert (tmp_path / "ready").exists()
    assert result.exit_code == 0
    assert result.survivors == []
    assert escapee.survivors(unreaped_by=os.getpid()) == []
    assert not registry.groups


@pytest.mark.parametrize("how", ESCAPES)
@pytest.mark.parametrize("trap", ["", "trap '' TERM; "], ids=["obeys-term", "ignores-term"])
async def test_an_escapee_dies_when_the_turn_signal_aborts_the_call(
    tmp_path: Path, escapee: Escapee, how: str, trap: str
) -> None:
    ready = tmp_path / "ready"
    turn = TurnCancellation()
    command = f"{trap}{escapee.command(how, ready)}; sleep 300"

    async def abort_when_ready() -> None:
        while not ready.exists():  # noqa: ASYNC110 - polling another process's file
            await anyio.sleep(0.01)
        assert escapee.survivors(), "the escapee never started"
        turn.abort(UserCancel())

    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_when_ready)
        result = await run(command, tmp_path, signal=turn.signal, registry=None, grace=0.3)
    assert result.aborted
    assert result.survivors == []
    assert escapee.survivors(unreaped_by=os.getpid()) == []


async def test_an_escapee_that_clears_its_environment_dies_at_shutdown(
    tmp_path: Path, escapee: Escapee
) -> None:
    # A double fork that also drops the token cannot be told apart from another call's
    # orphan; the call returns without it, and the registry's shutdown sweep kills it.
    ready = tmp_path / "ready"
    code = (
        "import os, sys; os.fork() and sys.exit(); os.setsid(); os.fork() and sys.exit(); "
        f"open({str(ready)!r}, 'w').write(str(os.getpid())); "
        f"os.execve({str(escapee.path)!r}, [{str(escapee.path)!r}, '300'], {{}})"
    )
    registry = ProcessRegistry()
    python = shlex.join([sys.executable, "-c", code])
    # The call ends only once the escapee has exec'd (no longer carries the token) and its
    # parent has exited (it is re-parented to us, the shell's parent): until then the walk
    # still reaches it through a process that has the token, and kills it with the call.
    stat = f"$(cat /proc/$(cat {ready})/stat)"
    detached = (
        f'[ -s {ready} ] && set -- {stat} && [ "$2" = "({escapee.name})" ] && [ "$4" = $PPID ]'
    )
    command = f"{python} & until {detached}; do sleep 0.01; done"
    await run(command, tmp_path, signal=None, registry=registry)
    [pid] = escapee.survivors()
    with anyio.fail_after(DEADLINE):
        await registry.kill_all(grace=0.2)
        while escapee.survivors():  # noqa: ASYNC110 - SIGKILL is delivered asynchronously
            await anyio.sleep(0.01)
    # A zombie now, re-parented to us (the subreaper): the sweep kills, our exit would reap.
    assert reap_orphans([pid]) == [pid]


async def test_a_closed_registry_starts_nothing(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    await registry.kill_all()
    marker = tmp_path / "spawned"
    with pytest.raises(RegistryClosed):
        await run(f"touch {marker}", tmp_path, signal=None, registry=registry)
    assert not marker.exists()


async def test_every_child_carries_a_token_of_its_own(tmp_path: Path) -> None:
    results = [
        await run(f'echo "${TOKEN_VARIABLE}"', tmp_path, signal=None, registry=None)
        for _ in range(2)
    ]
    tokens = {result.stdout.strip() for result in results}
    assert len(tokens) == 2 and "" not in tokens


def test_a_recorded_pid_is_not_mistaken_for_a_later_process() -> None:
    me = read_stat(os.getpid())
    assert me is not None
    assert is_same(os.getpid(), me.start) == me
    assert is_same(os.getpid(), me.start + 1) is None
