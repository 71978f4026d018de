"""The watchdog (acp_server/process/watchdog.py): what an agent's calls left running dies with
the agent, even an agent killed with SIGKILL; what the watchdog was not told about, or was told
to forget, or that is not the process it was told about, lives on. Real processes: the "agent"
is tests/support/spawner.py, killed with SIGKILL, or the test itself holding the lifeline;
survivors are found by their marks in /proc (tests/support/survivors.py). The agent's side (the
lifeline, a lost watchdog replaced): tests/process/test_lifeline.py."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from acp_server.process import run_process, spawn
from acp_server.process.descendants import TOKEN_VARIABLE, read_stat
from acp_server.process.lifeline import WATCHDOG
from tests.support.programs import SPAWNER
from tests.support.survivors import ESCAPES, Escapee
from tests.support.watchdogs import watchdogs

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="the watchdog is Linux's"),
]

DEADLINE = 20.0
TERM_IGNORED = ["", "trap '' TERM; "]
TERM_IDS = ["obeys-term", "ignores-term"]
# Tokens of this run alone: a watchdog of a test run beside this one stops what carries its
# tokens, so fixed ones let it kill this module's processes.
A1, B2, C3 = (secrets.token_hex(8) for _ in range(3))


@pytest.fixture
def escapee(tmp_path: Path) -> Iterator[Escapee]:
    escapee = Escapee(tmp_path)
    yield escapee
    for pid in escapee.survivors():  # what a failing test left
        os.kill(pid, signal.SIGKILL)


@contextmanager
def agent_standin(mode: str, script: str) -> Iterator[subprocess.Popen[bytes]]:
    """The stand-in agent (`spawner.py MODE SCRIPT`), once it started the command; killed at
    the end if the test did not."""
    argv = [sys.executable, SPAWNER, mode, script]
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE) as agent:
        assert agent.stderr is not None
        assert agent.stderr.readline() == b"started\n"
        try:
            yield agent
        finally:
            agent.kill()


def tree(escapee: Escapee, tmp_path: Path, how: str, trap: str) -> str:
    """The command itself, a background child in its group and a child that left the group
    (or the tree) `how` says, all carrying the mark; with `trap`, SIGTERM is ignored."""
    mark = escapee.mark
    return (
        f"{trap}{escapee.command(how, tmp_path / 'ready')}; "
        f"{mark} {escapee.path} 300 & {mark} exec {escapee.path} 301"
    )


async def wait_until(condition: Callable[[], object]) -> None:
    with anyio.fail_after(DEADLINE):
        while not condition():  # noqa: ASYNC110 - other processes' state, read from /proc
            await anyio.sleep(0.02)


async def kill_and_count(agent: subprocess.Popen[bytes], escapee: Escapee) -> list[int]:
    """Once the whole tree runs, SIGKILL the agent; the survivors once the tree is gone (or
    the deadline passed)."""
    await wait_until(lambda: len(escapee.survivors()) >= 3)
    agent.kill()
    await wait_until(lambda: not escapee.survivors())
    return escapee.survivors()


@pytest.mark.parametrize("how", ESCAPES)
@pytest.mark.parametrize("trap", TERM_IGNORED, ids=TERM_IDS)
async def test_a_tree_dies_with_an_agent_killed_by_sigkill(
    tmp_path: Path, escapee: Escapee, how: str, trap: str
) -> None:
    # As an MCP stdio server is started (`spawn`, a stdin pipe, our stderr).
    with agent_standin("spawn", tree(escapee, tmp_path, how, trap)) as agent:
        assert await kill_and_count(agent, escapee) == []


@pytest.mark.parametrize("mode", ["run", "background"])
async def test_a_hooks_and_a_background_items_trees_die_with_an_agent_killed_by_sigkill(
    tmp_path: Path, escapee: Escapee, mode: str
) -> None:
    # `run`: as a hook or a foreground `bash` command (`run_process` with a stdin payload).
    script = tree(escapee, tmp_path, "double-fork", "trap '' TERM; ")
    with agent_standin(mode, script) as agent:
        assert await kill_and_count(agent, escapee) == []


async def test_without_the_watchdog_the_tree_outlives_an_agent_killed_by_sigkill(
    escapee: Escapee,
) -> None:
    # What the watchdog is for (the measurement of the background-work RFC): each child leads
    # its own session, so nothing of the kernel's stops it when the agent dies.
    with agent_standin("unwatched", f"{escapee.mark} exec {escapee.path} 300") as agent:
        await wait_until(escapee.survivors)
        assert watchdogs(agent.pid) == []
        agent.kill()
    [pid] = escapee.survivors()
    assert os.getpgid(pid) == pid  # its own group, and now nobody's child of ours


async def test_a_watchdog_killed_while_the_agent_lives_is_replaced_with_the_calls_it_watched(
    tmp_path: Path, escapee: Escapee
) -> None:
    with agent_standin("spawn", tree(escapee, tmp_path, "setsid", "")) as agent:
        await wait_until(lambda: len(escapee.survivors()) >= 3 and watchdogs(agent.pid))
        [first] = watchdogs(agent.pid)
        os.kill(first, signal.SIGKILL)
        await wait_until(lambda: [pid for pid in watchdogs(agent.pid) if pid != first])
        assert await kill_and_count(agent, escapee) == []
        assert agent.stderr is not None
        log = agent.stderr.read().decode()
    assert f"the watchdog (pid {first}) that stops our commands" in log
    assert "is lost: it ended (exit status -9)" in log


async def test_while_the_agent_lives_its_command_is_its_own_child_and_ends_as_it_would() -> None:
    with anyio.fail_after(DEADLINE):
        result = await run_process(
            ["bash", "-c", "echo $PPID; echo err >&2; exit 3"], signal=None, registry=None, cwd="/"
        )
        killed = await run_process(
            ["bash", "-c", "kill -USR1 $$"], signal=None, registry=None, cwd="/"
        )
    assert (result.exit_code, result.stdout, result.stderr) == (3, f"{os.getpid()}\n", "err\n")
    assert (killed.exit_code, killed.posix_signal) == (None, signal.SIGUSR1)
    with pytest.raises(FileNotFoundError, match="no-such-program"):
        async with spawn(["no-such-program"], registry=None, cwd="/"):
            pass


# The watchdog's own rules, with the test as the agent: it holds the lifeline's write end and
# closes it to play the agent's death.


class Lifeline:
    """A watchdog started by the test, and the write end of its lifeline."""

    def __init__(self) -> None:
        reading, self.writing = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-B", WATCHDOG, str(reading)],
            pass_fds=(reading,),
            start_new_session=True,
        )
        os.close(reading)

    def tell(self, *lines: str) -> None:
        os.write(self.writing, "".join(f"{line}\n" for line in lines).encode())

    def close(self) -> int:
        """The agent's death: the watchdog stops what it watches and exits."""
        os.close(self.writing)
        return self.process.wait(DEADLINE)


def session_leader(argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`argv` leading a session of its own, with exactly `env`."""
    return subprocess.Popen(argv, env=env, start_new_session=True)


def started(escapee: Escapee, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """The escapee as a session leader with `env` and its mark; it and its start time."""
    name, value = escapee.mark.split("=")
    process = session_leader([str(escapee.path), "300"], {**env, name: value})
    stat = read_stat(process.pid)
    assert stat is not None
    return process, stat.start


async def test_a_forgotten_call_and_one_never_told_are_left_alone(escapee: Escapee) -> None:
    watchdog = Lifeline()
    forgotten, start = started(escapee, {TOKEN_VARIABLE: A1})
    stranger, _ = started(escapee, {TOKEN_VARIABLE: B2})
    watchdog.tell(f"w {A1} 0.1", f"g {A1} {forgotten.pid} {start}", f"f {A1}", f"w {C3} 0.1")
    assert watchdog.close() == 0
    assert forgotten.poll() is None and stranger.poll() is None
    for process in (forgotten, stranger):
        process.kill()
        process.wait()


async def test_a_leader_is_signalled_only_while_it_is_the_process_registered(
    escapee: Escapee,
) -> None:
    # Neither carries the token: only the pid and the start time can name them.
    watchdog = Lifeline()
    same, start = started(escapee, {})
    other, other_start = started(escapee, {})
    watchdog.tell(
        f"w {A1} 0.1", f"g {A1} {same.pid} {start}", f"w {B2} 0.1", f"g {B2} {other.pid} 1"
    )
    assert watchdog.close() == 0
    assert same.wait(DEADLINE) == -signal.SIGTERM
    assert other.poll() is None and other_start != 1
    other.kill()
    other.wait()


@pytest.mark.parametrize("trap", TERM_IGNORED, ids=TERM_IDS)
async def test_without_the_token_the_leaders_session_and_what_is_below_it_die(
    tmp_path: Path, escapee: Escapee, trap: str
) -> None:
    # The leader's environment has no token: a child that left the group and the tree but not
    # the session (setpgid, then a double fork), and one that left the session but is still
    # below the leader (setsid), are found by the session and by the parent links.
    double = escapee.command("double-fork", tmp_path / "ready1").replace(
        "os.setsid()", "os.setpgid(0, 0)"
    )
    script = f"{trap}{double}; {escapee.command('setsid', tmp_path / 'ready2')}; wait"
    watchdog = Lifeline()
    leader = session_leader(["bash", "-c", script], {})
    await wait_until(lambda: (tmp_path / "ready1").exists() and (tmp_path / "ready2").exists())
    stat = read_stat(leader.pid)
    assert stat is not None
    watchdog.tell(f"w {A1} 0.3", f"g {A1} {leader.pid} {stat.start}")
    assert watchdog.close() == 0
    leader.wait(DEADLINE)
    await wait_until(lambda: not escapee.survivors())
    assert escapee.survivors() == []
