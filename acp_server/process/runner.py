"""`run_process`: spawn a child, feed and drain its pipes, and settle its tree on every way
out. See the package docstring for the rules."""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from subprocess import DEVNULL, PIPE

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from acp_server.cancellation import TurnSignal
from acp_server.process.groups import ProcessRegistry
from acp_server.process.spawn import spawn

_DRAIN_TIMEOUT = 1.0
"""After the join, how long to wait for EOF on stdout/stderr. Only a process the join could
not attribute to this call (see `descendants`) that kept our pipes open makes this expire."""


@dataclass(frozen=True)
class ProcessResult:
    """How a child process ended and what it wrote.

    `exit_code` and `posix_signal` describe the group leader: an exit status, or the number
    of the signal that killed it (then `exit_code` is None); both are None only if the
    leader survived the join. `timed_out` and `aborted` say which stop, if any, we
    initiated: the timeout or the turn signal (never both).
    """

    exit_code: int | None
    posix_signal: int | None
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
    registry: ProcessRegistry | None,
    cwd: str,
    env: Mapping[str, str] | None = None,
    stdin_data: bytes | None = None,
    # Not `fail_after` around the call: a timeout is an outcome (`timed_out`), not an error.
    timeout: float | None = None,  # noqa: ASYNC109
    output_limit: int = 1 << 20,
    grace: float = 2.0,
    on_output: Callable[[bytes], None] | None = None,
    watched: bool = True,
) -> ProcessResult:
    """Run `argv` through `spawn` and return once its whole tree is gone.

    - `signal` (the turn signal) aborted before the call: nothing is spawned and
      `TurnAborted` is raised. Aborted during the call: the tree is stopped and the result
      has `aborted=True` (no exception: the caller decides what an abort means).
    - `timeout` (seconds from the spawn) expired: the tree is stopped, `timed_out=True`.
    - Stopping is SIGTERM to the group and every recorded descendant, up to `grace`
      seconds, SIGKILL, and the join.
    - `registry`, `env` and `watched`: as for `spawn`.
    - `stdin_data` is written to the child's stdin, which is then closed; without it
      stdin is `/dev/null`.
    - stdout and stderr keep their last `output_limit` bytes each (`*_truncated` says
      whether anything was dropped), decoded as UTF-8 with replacement characters.
    - A cancellation of the caller still stops and joins the tree (shielded), then
      propagates.
    - `on_output` is called with each chunk of stdout or stderr as it is read (for showing
      a command's output while it runs); it must not block.
    """
    if output_limit < 0:
        raise ValueError("output_limit must not be negative")
    if signal is not None:
        signal.raise_if_aborted()
    started = time.monotonic()
    stdout, stderr = _Tail(output_limit), _Tail(output_limit)
    async with spawn(
        argv,
        registry=registry,
        cwd=cwd,
        env=env,
        stdin=PIPE if stdin_data else DEVNULL,
        grace=grace,
        watched=watched,
    ) as child:
        process = child.process
        async with anyio.create_task_group() as tg:
            stdout_done, stderr_done = anyio.Event(), anyio.Event()
            tg.start_soon(_drain, process.stdout, stdout, stdout_done, on_output)
            tg.start_soon(_drain, process.stderr, stderr, stderr_done, on_output)
            if stdin_data and process.stdin is not None:
                tg.start_soon(_feed, process.stdin, stdin_data)
            try:
                timed_out, aborted = await _wait_exit(process, signal, timeout)
            finally:
                with anyio.CancelScope(shield=True):
                    survivors = await child.settle(grace)
                    with anyio.move_on_after(_DRAIN_TIMEOUT):
                        await stdout_done.wait()
                        await stderr_done.wait()
                    tg.cancel_scope.cancel()
    code = process.returncode
    return ProcessResult(
        exit_code=code if code is not None and code >= 0 else None,
        posix_signal=-code if code is not None and code < 0 else None,
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


async def _drain(
    stream: ByteReceiveStream | None,
    tail: _Tail,
    done: anyio.Event,
    on_output: Callable[[bytes], None] | None,
) -> None:
    try:
        if stream is not None:
            async for chunk in stream:
                tail.add(chunk)
                if on_output is not None:
                    on_output(chunk)
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
