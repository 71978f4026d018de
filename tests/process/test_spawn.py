"""`spawn` (acp_server/process/spawn.py) with real processes: the child leads its own session
and group, gets the environment it is given plus the descendants' token, stdin at EOF, and no
start at all when the registry is closed or the argv is empty; its whole tree is gone when the
block ends, whether the leader ended or not. Every stop path (timeout, signal, cancelled
caller, SIGKILL after the grace) through the runner built on it: tests/process/test_runner.py;
the watchdog's: tests/process/test_watchdog.py and tests/process/test_lifeline.py."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from acp_server.process import ProcessRegistry, RegistryClosed, spawn
from acp_server.process.descendants import TOKEN_VARIABLE
from tests.support.backends import anyio_backend  # noqa: F401 - on asyncio and trio
from tests.support.processes import DEADLINE, assert_gone, bash, wait_for_pids, write_pids

pytestmark = pytest.mark.anyio


async def test_the_child_leads_its_group_with_the_given_environment_and_the_token(
    tmp_path: Path,
) -> None:
    report = (
        "import os, sys\n"
        "print(os.getpid(), os.getpgid(0), os.getsid(0))\n"
        f"print(os.environ.get('ONLY'), 'HOME' in os.environ, {TOKEN_VARIABLE!r} in os.environ)\n"
        "print(repr(sys.stdin.read()))\n"
    )
    env = {"ONLY": "this"}
    with anyio.fail_after(DEADLINE):
        async with spawn(
            [sys.executable, "-c", report], registry=None, cwd=str(tmp_path), env=env
        ) as child:
            assert child.process.stdout is not None
            output = b""
            async for chunk in child.process.stdout:
                output += chunk
    ids, variables, stdin = output.decode().splitlines()
    pid, pgid, sid = (int(word) for word in ids.split())
    assert pid == pgid == sid == child.process.pid
    assert variables == "this False True"  # what was given and the token, nothing of ours
    assert stdin == "''"  # /dev/null: at its end at once


async def test_the_tree_is_stopped_and_joined_when_the_block_ends(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 300 & sleep 300 & {write_pids(pids, '$$', '$!')}; wait"
    with anyio.fail_after(DEADLINE):
        async with spawn(bash(script), registry=None, cwd=str(tmp_path), grace=0.2):
            started = await wait_for_pids(pids, 2)
    assert_gone(started)


async def test_a_registry_holds_the_tree_while_it_lives_and_a_closed_one_starts_nothing(
    tmp_path: Path,
) -> None:
    registry = ProcessRegistry()
    with anyio.fail_after(DEADLINE):
        async with spawn(bash("sleep 300"), registry=registry, cwd=str(tmp_path), grace=0.2) as c:
            assert registry.groups == frozenset({c.process.pid})
        assert len(registry) == 0
        await registry.kill_all()
    with pytest.raises(RegistryClosed):
        async with spawn(bash("touch started"), registry=registry, cwd=str(tmp_path)):
            pass
    assert not (tmp_path / "started").exists()


async def test_an_empty_argv_is_refused() -> None:
    with pytest.raises(ValueError, match="argv must not be empty"):
        async with spawn([], registry=None, cwd=None):
            pass
