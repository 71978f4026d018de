"""Process groups (acp_server/process/groups.py): the registry and kill_all at shutdown, the
subreaper, and orphans reaped by the join."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path
from signal import SIGKILL, SIGTERM

import anyio
import pytest

from acp_server.process import (
    ProcessRegistry,
    ProcessResult,
    become_subreaper,
    reap_orphans,
)
from tests.support.processes import (
    DEADLINE,
    assert_gone,
    bash,
    run_bounded,
    wait_for_pids,
    write_pids,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
    pytest.mark.usefixtures("module_subreaper"),
]

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


def _prctl(option: int, arg: int) -> int:
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    result: int = prctl(option, arg, 0, 0, 0)
    return result


# -- registry and shutdown -------------------------------------------------------------


async def test_registry_kill_all_stops_every_live_group(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    results: list[ProcessResult] = []
    pidfiles = [tmp_path / "pids-a", tmp_path / "pids-b"]

    async def call(pidfile: Path) -> None:
        script = f"sleep 300 & a=$!; {write_pids(pidfile, '$$', '$a')}; wait"
        results.append(await run_bounded(bash(script), tmp_path, signal=None, registry=registry))

    async with anyio.create_task_group() as tg:
        for pidfile in pidfiles:
            tg.start_soon(call, pidfile)
        pids = [
            pid for pidfile in pidfiles for pid in await wait_for_pids(pidfile, within=DEADLINE)
        ]
        with anyio.fail_after(DEADLINE):
            # A child can write its pids before `spawn` has registered it.
            while len(registry) < 2:  # noqa: ASYNC110
                await anyio.sleep(0.01)
        with anyio.fail_after(DEADLINE):
            assert await registry.kill_all(grace=0.5) == []
    assert_gone(pids)
    assert len(results) == 2
    for result in results:
        assert result.posix_signal == SIGTERM
        assert not (result.aborted or result.timed_out)
    assert not registry.groups


async def test_kill_all_escalates_to_sigkill_after_its_grace(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    pidfile = tmp_path / "pids"
    script = f"trap '' TERM; sleep 300 & a=$!; {write_pids(pidfile, '$$', '$a')}; wait"
    results: list[ProcessResult] = []

    async def call() -> None:
        results.append(await run_bounded(bash(script), tmp_path, signal=None, registry=registry))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        pids = await wait_for_pids(pidfile, within=DEADLINE)
        with anyio.fail_after(DEADLINE):
            # The child can write its pids before `spawn` has registered it.
            while pids[0] not in registry.groups:  # noqa: ASYNC110
                await anyio.sleep(0.01)
        with anyio.fail_after(DEADLINE):
            await registry.kill_all(grace=0.2)
    assert_gone(pids)
    assert results[0].posix_signal == SIGKILL
    assert not registry.groups


async def test_kill_all_with_nothing_running_returns_at_once() -> None:
    registry = ProcessRegistry()
    with anyio.fail_after(DEADLINE):  # a guard against a hang: nothing to wait for
        assert await registry.kill_all() == []


# -- subreaper and reaping helpers -----------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux prctl")
def test_become_subreaper_succeeds_on_linux() -> None:
    assert become_subreaper() is True
    flag = ctypes.c_int(0)
    assert _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag)) == 0
    assert flag.value == 1


def test_reap_orphans_skips_pids_that_are_not_our_children() -> None:
    assert reap_orphans([1, os.getpid()]) == []


async def test_orphans_reparented_to_us_are_reaped_by_the_join(tmp_path: Path) -> None:
    # The leader is killed with its children; the sleeps become our children as orphans
    # and must be reaped by us, not left as zombies in the group.
    pidfile = tmp_path / "pids"
    script = f"sleep 300 & a=$!; sleep 300 & b=$!; {write_pids(pidfile, '$$', '$a', '$b')}; wait"
    result = await run_bounded(bash(script), tmp_path, signal=None, timeout=0.5, grace=0.0)
    pids = await wait_for_pids(pidfile, within=DEADLINE)
    assert result.timed_out
    assert result.survivors == []
    assert_gone(pids)
