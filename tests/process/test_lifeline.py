"""The agent's side of the watchdog (acp_server/process/lifeline.py), with real processes: no
watchdog before the first call; the one started leads its own session, with no environment,
`/dev/null` for its standard streams and `/` as its directory; a watchdog killed, or one that
stopped reading, is replaced and the loss logged, also when its pidfd is numbered past select's
1024; the registry neither reaps nor kills it. That
the calls it was told about die with the agent: tests/process/test_watchdog.py."""

from __future__ import annotations

import logging
import os
import resource
import signal
import sys
from collections.abc import Callable, Iterator

import anyio
import pytest

from acp_server.process import ProcessRegistry, run_process
from acp_server.process.descendants import read_stat
from acp_server.process.lifeline import LIFELINE, WATCHDOG, Lifeline

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="the watchdog is Linux's"),
]

DEADLINE = 20.0


@pytest.fixture
def lifeline() -> Iterator[Lifeline]:
    """A lifeline of its own (not the test process's); its watchdog, if any, is killed at the
    end (each test forgets its calls first, so it is not replaced)."""
    lifeline = Lifeline()
    yield lifeline
    if lifeline.pid is not None:
        os.kill(lifeline.pid, signal.SIGKILL)


def proc_file(pid: int, name: str) -> bytes:
    with open(f"/proc/{pid}/{name}", "rb") as f:
        return f.read()


async def wait_until(condition: Callable[[], object]) -> None:
    with anyio.fail_after(DEADLINE):
        while not condition():  # noqa: ASYNC110 - another thread replaces the watchdog
            await anyio.sleep(0.01)


async def test_the_watchdog_starts_with_the_first_call_on_its_own(lifeline: Lifeline) -> None:
    assert lifeline.pid is None
    lifeline.watch("a1", 2.0)
    pid = lifeline.pid
    assert pid is not None
    stat = read_stat(pid)
    assert stat is not None and stat.ppid == os.getpid()
    assert os.getsid(pid) == pid  # a signal to our group or session does not reach it
    # Its arguments and environment show in /proc a moment after the exec returned to us.
    await wait_until(lambda: proc_file(pid, "cmdline"))
    assert WATCHDOG.encode() in proc_file(pid, "cmdline").split(b"\0")
    assert proc_file(pid, "environ") == b""  # no key leaves the agent
    assert os.readlink(f"/proc/{pid}/cwd") == "/"  # it holds no directory busy
    for fd in (0, 1, 2):
        assert os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/null"
    lifeline.watch("b2", 2.0)
    assert lifeline.pid == pid  # one per process, not one per call
    lifeline.forget("a1")
    lifeline.forget("b2")


async def test_a_killed_watchdog_is_replaced_while_calls_are_registered(
    lifeline: Lifeline, caplog: pytest.LogCaptureFixture
) -> None:
    lifeline.watch("a1", 2.0)
    first = lifeline.pid
    assert first is not None
    with caplog.at_level(logging.WARNING, logger="acp_server.process.lifeline"):
        os.kill(first, signal.SIGKILL)
        await wait_until(lambda: lifeline.pid not in (first, None))
    assert f"the watchdog (pid {first})" in caplog.text
    assert "lost: it ended (exit status -9)" in caplog.text
    # With nothing registered, one killed is not replaced before the next call.
    second = lifeline.pid
    assert second is not None
    lifeline.forget("a1")
    os.kill(second, signal.SIGKILL)
    await wait_until(lambda: lifeline.pid is None)
    lifeline.watch("b2", 2.0)
    assert lifeline.pid not in (first, second, None)
    lifeline.forget("b2")


@pytest.fixture
def fds_past_select() -> Iterator[None]:
    """Every descriptor below 1024 taken (the soft RLIMIT_NOFILE raised for it), so the next
    ones opened are numbered where `select` refuses them; all given back at the end."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1100:
        pytest.skip(f"the hard RLIMIT_NOFILE ({hard}) leaves no room past 1024 descriptors")
    raised = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, raised), hard))
    taken = [os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)]
    try:
        while taken[-1] < 1023:  # dup takes the lowest free number: the gaps fill first
            taken.append(os.dup(taken[0]))
        yield
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def pidfds() -> list[int]:
    """The numbers of this process's pidfds."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[pidfd]":
                found.append(int(fd))
        except FileNotFoundError:
            continue  # the listing's own descriptor, closed since
    return found


@pytest.mark.usefixtures("fds_past_select")
async def test_a_watchdog_whose_pidfd_is_past_1024_is_watched_and_replaced(
    lifeline: Lifeline, caplog: pytest.LogCaptureFixture
) -> None:
    before = set(pidfds())
    lifeline.watch("a1", 2.0)
    first = lifeline.pid
    assert first is not None
    opened = set(pidfds()) - before
    assert opened and min(opened) >= 1024  # the case select cannot wait on
    with caplog.at_level(logging.WARNING, logger="acp_server.process.lifeline"):
        os.kill(first, signal.SIGKILL)
        await wait_until(lambda: lifeline.pid not in (first, None))
    assert "lost: it ended (exit status -9)" in caplog.text
    second = lifeline.pid
    assert second is not None
    lifeline.forget("a1")
    os.kill(second, signal.SIGKILL)
    await wait_until(lambda: lifeline.pid is None)  # its pidfd is closed before ours are


async def test_a_watchdog_that_stopped_reading_is_replaced(
    lifeline: Lifeline, caplog: pytest.LogCaptureFixture
) -> None:
    lifeline.watch("a1", 2.0)
    stopped = lifeline.pid
    assert stopped is not None
    os.kill(stopped, signal.SIGSTOP)
    with caplog.at_level(logging.WARNING, logger="acp_server.process.lifeline"):
        calls = 0
        while lifeline.pid == stopped:  # until its pipe is full
            calls += 1
            lifeline.watch(f"t{calls}", 2.0)
            lifeline.forget(f"t{calls}")
    lifeline.forget("a1")
    assert "lost: it stopped reading its lifeline (exit status -9)" in caplog.text
    with pytest.raises(ProcessLookupError):
        os.kill(stopped, 0)  # killed and reaped


async def test_the_registry_neither_reaps_nor_kills_the_watchdog() -> None:
    registry = ProcessRegistry()
    with anyio.fail_after(DEADLINE):
        await run_process(["true"], signal=None, registry=registry, cwd="/")
        pid = LIFELINE.pid
        assert pid is not None
        registry.reap_strays()
        await registry.kill_all()
    stat = read_stat(pid)
    assert stat is not None and stat.state != "Z"
    assert LIFELINE.pid == pid
