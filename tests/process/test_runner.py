"""The process runner (acp_server/process/runner.py) with real processes: output, exit
statuses, stdin, the output cap, and stops (timeout, turn signal, caller cancellation) that leave
no process of the group behind, checked pid by pid."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from signal import SIGKILL, SIGTERM

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.process import (
    ProcessRegistry,
    ProcessResult,
    group_members,
    run_process,
)
from tests.support.backends import anyio_backend  # noqa: F401 - on asyncio and trio
from tests.support.processes import (
    DEADLINE,
    assert_gone,
    bash,
    run_bounded,
    wait_for_pids,
    write_pids,
)

AN_HOUR = 3600.0

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
    pytest.mark.usefixtures("module_subreaper"),
]


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


# -- output, exit statuses, stdin, environment ---------------------------------------------


async def test_stdout_and_stderr_are_captured_separately(tmp_path: Path) -> None:
    result = await run_bounded(bash("echo out; echo err >&2"), tmp_path, signal=None)
    assert result.stdout == "out\n"
    assert result.stderr == "err\n"
    assert (result.exit_code, result.posix_signal) == (0, None)
    assert not (result.stdout_truncated or result.stderr_truncated)
    assert not (result.timed_out or result.aborted)
    assert result.survivors == []
    assert result.duration >= 0


async def test_the_exit_code_is_reported(tmp_path: Path) -> None:
    result = await run_bounded(bash("exit 3"), tmp_path, signal=None)
    assert (result.exit_code, result.posix_signal) == (3, None)


async def test_death_by_signal_is_reported_as_the_signal_not_an_exit_code(tmp_path: Path) -> None:
    result = await run_bounded(bash("kill -KILL $$"), tmp_path, signal=None)
    assert (result.exit_code, result.posix_signal) == (None, SIGKILL)
    assert not (result.timed_out or result.aborted)


async def test_stdin_payload_is_delivered_then_closed(tmp_path: Path) -> None:
    payload = b'{"hook": "pre_tool", "tool": "bash"}'
    result = await run_bounded(["cat"], tmp_path, signal=None, stdin_data=payload)
    assert result.stdout == payload.decode()
    assert result.exit_code == 0


async def test_large_stdin_payload_is_delivered_whole(tmp_path: Path) -> None:
    payload = b"x" * (1 << 20)  # far beyond a pipe buffer
    result = await run_bounded(["wc", "-c"], tmp_path, signal=None, stdin_data=payload)
    assert result.stdout.strip() == str(len(payload))


async def test_stdin_is_at_eof_without_a_payload(tmp_path: Path) -> None:
    result = await run_bounded(["cat"], tmp_path, signal=None, timeout=10)
    assert (result.stdout, result.exit_code, result.timed_out) == ("", 0, False)


async def test_a_child_that_ignores_its_stdin_payload_is_not_an_error(tmp_path: Path) -> None:
    result = await run_bounded(["true"], tmp_path, signal=None, stdin_data=b"y" * (1 << 20))
    assert result.exit_code == 0


async def test_cwd_and_env_are_applied(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ONLY_THIS": "yes"}
    result = await run_bounded(
        bash('pwd; echo "$ONLY_THIS"; env | wc -l'), tmp_path, signal=None, env=env
    )
    cwd, value, count = result.stdout.split()
    assert await anyio.Path(cwd).resolve() == await anyio.Path(tmp_path).resolve()
    assert value == "yes"
    assert int(count) < 10  # replaced, not merged into ours


async def test_the_child_never_writes_to_our_stdout_or_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    result = await run_bounded(
        bash("echo leak-out-marker; echo leak-err-marker >&2"), tmp_path, signal=None
    )
    assert result.stdout == "leak-out-marker\n"
    assert result.stderr == "leak-err-marker\n"
    leaked = capfd.readouterr()
    assert "leak-out-marker" not in leaked.out
    assert "leak-err-marker" not in leaked.err


async def test_the_child_leads_its_own_process_group(tmp_path: Path) -> None:
    result = await run_bounded(
        python("import os; print(os.getpid(), os.getpgrp(), os.getsid(0))"), tmp_path, signal=None
    )
    pid, pgid, sid = map(int, result.stdout.split())
    assert pid == pgid == sid
    assert pgid != os.getpgrp()


# -- the output cap --------------------------------------------------------------------


async def test_the_output_cap_keeps_the_tail_and_marks_truncation(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('a' * 100 + 'TAIL'); sys.stderr.write('short')"
    result = await run_bounded(python(code), tmp_path, signal=None, output_limit=10)
    assert result.stdout == "aaaaaaTAIL"
    assert result.stdout_truncated
    assert result.stderr == "short"
    assert not result.stderr_truncated


async def test_output_exactly_at_the_cap_is_not_truncated(tmp_path: Path) -> None:
    result = await run_bounded(python("print('x' * 9)"), tmp_path, signal=None, output_limit=10)
    assert (result.stdout, result.stdout_truncated) == ("x" * 9 + "\n", False)


async def test_both_streams_are_drained_concurrently_far_beyond_the_cap(tmp_path: Path) -> None:
    # Each stream is written whole before the other: without concurrent draining the child
    # would block on a full pipe.
    code = (
        "import sys; sys.stderr.write('e' * 3_000_000 + 'ERR-END'); sys.stderr.flush();"
        " sys.stdout.write('o' * 3_000_000 + 'OUT-END')"
    )
    result = await run_bounded(python(code), tmp_path, signal=None, output_limit=1000, timeout=15)
    assert not result.timed_out
    assert len(result.stdout) == len(result.stderr) == 1000
    assert result.stdout.endswith("OUT-END") and result.stderr.endswith("ERR-END")
    assert result.stdout_truncated and result.stderr_truncated


async def test_truncation_does_not_start_with_half_a_character(tmp_path: Path) -> None:
    result = await run_bounded(
        python("print('é' * 10, end='')"), tmp_path, signal=None, output_limit=5
    )
    assert result.stdout == "éé"
    assert result.stdout_truncated


async def test_invalid_utf8_is_replaced_not_raised(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.buffer.write(b'ok\\xff')"
    result = await run_bounded(python(code), tmp_path, signal=None)
    assert result.stdout == "ok\ufffd"


# -- stopping the group ----------------------------------------------------------------


async def test_a_timeout_stops_the_whole_group_with_sigterm(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    script = f"sleep 300 & a=$!; sleep 300 & b=$!; {write_pids(pidfile, '$$', '$a', '$b')}; wait"
    with anyio.fail_after(DEADLINE):  # the grace is an hour: only SIGTERM obeyed ends it
        result = await run_bounded(bash(script), tmp_path, signal=None, timeout=1.0, grace=AN_HOUR)
    pids = await wait_for_pids(pidfile, within=DEADLINE)
    assert result.timed_out and not result.aborted
    assert result.posix_signal == SIGTERM  # respected SIGTERM: no need to wait out the grace
    assert result.survivors == []
    assert_gone(pids)
    assert group_members(pids[0]) == []


async def test_the_turn_signal_stops_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    script = f"sleep 300 & a=$!; sleep 300 & b=$!; {write_pids(pidfile, '$$', '$a', '$b')}; wait"
    turn = TurnCancellation()
    results: list[ProcessResult] = []

    async def call() -> None:
        results.append(await run_bounded(bash(script), tmp_path, signal=turn.signal, grace=10.0))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        pids = await wait_for_pids(pidfile, within=DEADLINE)
        turn.abort(UserCancel())
    [result] = results
    assert result.aborted and not result.timed_out
    assert result.posix_signal == SIGTERM
    assert result.survivors == []
    assert_gone(pids)


async def test_a_group_that_ignores_sigterm_dies_by_sigkill_after_the_grace(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    # The ignored disposition is inherited by the background sleep across exec.
    script = f"trap '' TERM; sleep 300 & a=$!; {write_pids(pidfile, '$$', '$a')}; wait"
    turn = TurnCancellation()
    results: list[ProcessResult] = []

    async def call() -> None:
        results.append(await run_bounded(bash(script), tmp_path, signal=turn.signal, grace=0.5))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        pids = await wait_for_pids(pidfile, within=DEADLINE)
        aborted_at = time.monotonic()
        turn.abort(UserCancel())
    elapsed = time.monotonic() - aborted_at
    [result] = results
    assert result.aborted
    assert result.posix_signal == SIGKILL
    assert elapsed >= 0.4  # the grace was given (a lower bound: a slow machine cannot break it)
    assert result.survivors == []
    assert_gone(pids)


async def test_a_cancelled_caller_still_stops_and_reaps_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    script = f"sleep 300 & a=$!; sleep 300 & b=$!; {write_pids(pidfile, '$$', '$a', '$b')}; wait"
    pids: list[int] = []
    registry = ProcessRegistry()

    async def cancel_when_started(scope: anyio.CancelScope) -> None:
        pids.extend(await wait_for_pids(pidfile, within=DEADLINE))
        scope.cancel()

    with anyio.fail_after(DEADLINE), anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_started, scope)
            await run_process(
                bash(script), signal=None, registry=registry, cwd=str(tmp_path), grace=0.5
            )
            pytest.fail("run_process returned instead of propagating the cancellation")
    assert scope.cancelled_caught
    assert_gone(pids)
    assert not registry.groups


async def test_background_children_left_after_a_normal_exit_are_killed(tmp_path: Path) -> None:
    # One keeps our stdout pipe open, one does not: both are stopped all the same.
    script = "sleep 300 & echo $!; sleep 300 >/dev/null 2>&1 & echo $!; exit 0"
    with anyio.fail_after(DEADLINE):  # the grace is an hour: only SIGTERM obeyed ends it
        result = await run_bounded(bash(script), tmp_path, signal=None, grace=AN_HOUR)
    pids = [int(word) for word in result.stdout.split()]
    assert len(pids) == 2
    assert (result.exit_code, result.posix_signal) == (0, None)
    assert not (result.timed_out or result.aborted)
    assert result.survivors == []
    assert_gone(pids)


async def test_an_already_aborted_signal_spawns_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "spawned"
    turn = TurnCancellation()
    registry = ProcessRegistry()
    turn.abort(UserCancel())
    with pytest.raises(TurnAborted):
        await run_process(
            ["touch", str(marker)], signal=turn.signal, registry=registry, cwd=str(tmp_path)
        )
    await anyio.sleep(0.2)
    assert not await anyio.Path(marker).exists()
    assert not registry.groups


async def test_a_signal_never_aborted_lets_the_process_finish(tmp_path: Path) -> None:
    turn = TurnCancellation()
    result = await run_bounded(bash("echo done"), tmp_path, signal=turn.signal)
    assert (result.stdout, result.aborted, result.timed_out) == ("done\n", False, False)
