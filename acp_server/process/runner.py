"""`run_process`: spawn a child in its own group, feed and drain its pipes, and settle the
group on every way out. See the package docstring for the rules."""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from subprocess import DEVNULL, PIPE

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from acp_server.cancellation import TurnSignal
from acp_server.process.groups import JOIN_TIMEOUT, ProcessRegistry, default_registry, stop_groups

_DRAIN_TIMEOUT = 1.0
"""After the join, how long to wait for EOF on stdout/stderr. Only a process that left
the group (`setsid`) and kept our pipes open makes this expire."""

_LEADER_TIMEOUT = 1.0
"""After the group is empty, how long to wait for the event loop to report the leader's
exit status (it was already reaped; this only covers the callback's latency)."""


@dataclass(frozen=True)
class ProcessResult:
    """How a child process ended and what it wrote.

    `exit_code` and `signal` describe the group leader: an exit status, or the number of
    the signal that killed it (then `exit_code` is None); both are None only if the leader
    survived the join. `timed_out` and `aborted` say which stop, if any, we initiated:
    the timeout or the turn signal (never both).
    """

    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    timed_out: bool
    aborted: bool
    survivors: list[int]
    duration: float


async def run_process(
    argv: Sequence[str],
    *,
    signal: TurnSignal | None,
    cwd: str,
    env: Mapping[str, str] | None = None,
    stdin_data: bytes | None = None,
    # Not `fail_after` around the call: a timeout is an outcome (`timed_out`), not an error.
    timeout: float | None = None,  # noqa: ASYNC109
    output_limit: int = 1 << 20,
    grace: float = 2.0,
    registry: ProcessRegistry | None = None,
) -> ProcessResult:
    """Run `argv` in its own process group and return once that group is empty.

    - `signal` aborted before the call: nothing is spawned and `TurnAborted` is raised.
      Aborted during the call: the group is stopped and the result has `aborted=True`
      (no exception: the caller decides what an abort means).
    - `timeout` (seconds from the spawn) expired: the group is stopped, `timed_out=True`.
    - Stopping is SIGTERM to the group, up to `grace` seconds, SIGKILL, and the join.
    - `env` replaces the environment when given (None inherits ours).
    - `stdin_data` is written to the child's stdin, which is then closed; without it
      stdin is `/dev/null`.
    - stdout and stderr keep their last `output_limit` bytes each (`*_truncated` says
      whether anything was dropped), decoded as UTF-8 with replacement characters.
    - A cancellation of the caller still stops and joins the group (shielded), then
      propagates.
    """
    if not argv:
        raise ValueError("argv must not be empty")
    if output_limit < 0:
        raise ValueError("output_limit must not be negative")
    if signal is not None:
        signal.raise_if_aborted()
    registry = default_registry if registry is None else registry
    started = time.monotonic()
    # Shielded: a cancellation must not land between the fork and our holding the handle.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            list(argv),
            stdin=PIPE if stdin_data else DEVNULL,
            stdout=PIPE,
            stderr=PIPE,
            cwd=cwd,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
        pgid = process.pid  # a session leader leads its own group: pgid == pid
        registry.register(pgid)
    stdout, stderr = _Tail(output_limit), _Tail(output_limit)
    try:
        async with anyio.create_task_group() as tg:
            stdout_done, stderr_done = anyio.Event(), anyio.Event()
            tg.start_soon(_drain, process.stdout, stdout, stdout_done)
            tg.start_soon(_drain, process.stderr, stderr, stderr_done)
            if stdin_data and process.stdin is not None:
                tg.start_soon(_feed, process.stdin, stdin_data)
            try:
                timed_out, aborted = await _wait_exit(process, signal, timeout)
            finally:
                with anyio.CancelScope(shield=True):
                    survivors = await _settle(process, pgid, grace)
                    with anyio.move_on_after(_DRAIN_TIMEOUT):
                        await stdout_done.wait()
                        await stderr_done.wait()
                    tg.cancel_scope.cancel()
    finally:
        registry.unregister(pgid)
        with anyio.CancelScope(shield=True):
            await _close(process)
    code = process.returncode
    return ProcessResult(
        exit_code=code if code is not None and code >= 0 else None,
        signal=-code if code is not None and code < 0 else None,
        stdout=stdout.text(),
        stderr=stderr.text(),
        stdout_truncated=stdout.truncated,
        stderr_truncated=stderr.truncated,
        timed_out=timed_out,
        aborted=aborted,
        survivors=survivors,
        duration=time.monotonic() - started,
    )


class _Tail:
    """The last `limit` bytes of a stream, kept as chunks so dropping the head is cheap."""

    __slots__ = ("_chunks", "_limit", "_size", "truncated")

    def __init__(self, limit: int) -> None:
        self._chunks: deque[bytes] = deque()
        self._limit = limit
        self._size = 0
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._chunks and self._size - len(self._chunks[0]) >= self._limit:
            self._size -= len(self._chunks.popleft())
            self.truncated = True

    def text(self) -> str:
        data = b"".join(self._chunks)
        if len(data) > self._limit:
            data = data[len(data) - self._limit :]
            self.truncated = True
        if self.truncated:
            # The cut may split a character: drop its orphaned continuation bytes.
            skip = 0
            while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
                skip += 1
            data = data[skip:]
        return data.decode("utf-8", errors="replace")


async def _drain(stream: ByteReceiveStream | None, tail: _Tail, done: anyio.Event) -> None:
    try:
        if stream is not None:
            async for chunk in stream:
                tail.add(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()


async def _feed(stream: ByteSendStream, data: bytes) -> None:
    # A child that exits or closes stdin without reading it all is not an error.
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        try:
            await stream.send(data)
        finally:
            await stream.aclose()


async def _wait_exit(
    process: Process, signal: TurnSignal | None, limit: float | None
) -> tuple[bool, bool]:
    """Wait for the leader to exit, the signal to abort, or `limit` seconds; return
    (timed_out, aborted). A cancellation of the caller propagates."""
    with anyio.move_on_after(limit) as deadline:
        if signal is None:
            await process.wait()
        else:
            with signal.linked_scope():
                await process.wait()
    if process.returncode is not None:
        return False, False
    aborted = signal is not None and signal.aborted
    return deadline.cancelled_caught and not aborted, aborted


async def _settle(process: Process, pgid: int, grace: float) -> list[int]:
    """Stop and join the group of `process` if anything of it is left; return survivors."""
    leader_reaped = anyio.Event()

    async def reap_leader() -> None:
        # asyncio's child watcher reaps the leader by itself; trio only inside wait().
        await process.wait()
        leader_reaped.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reap_leader)
        survivors = await stop_groups([pgid], grace, JOIN_TIMEOUT)
        if pgid not in survivors:
            with anyio.move_on_after(_LEADER_TIMEOUT):
                await leader_reaped.wait()
        tg.cancel_scope.cancel()
    return survivors


async def _close(process: Process) -> None:
    """Close our ends of the pipes; wait for the leader only if it is known to have exited
    (a leader that survived the join must not hang us)."""
    if process.returncode is not None:
        await process.aclose()
        return
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await stream.aclose()
