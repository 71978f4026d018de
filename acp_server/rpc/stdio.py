"""Byte streams over raw file descriptors, and the fd-level guard that reserves stdout.

Measured facts behind this module (see
docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md): `wait_readable` and
`wait_writable` with `os.read`/`os.write` are the only way to read and write stdio that is
cancellable, never blocks the event loop, and works for pipes, ttys, sockets, regular files and
/dev/null. epoll refuses regular files and /dev/null with EPERM; those never block for long, so
the streams fall back to plain calls for them (reads in a worker thread).
"""

from __future__ import annotations

import os
import select
import stat
import sys

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

# A write of at most PIPE_BUF bytes to a pipe that polls writable never blocks.
_PIPE_BUF = 4096


def protect_stdout() -> int:
    """Reserve the real stdout for the protocol writer and return its private fd.

    Afterwards fd 1 is a copy of stderr, so a stray print, a C extension or a child process
    that inherits fd 1 writes to stderr instead of corrupting the protocol stream.
    """
    protocol_fd = os.dup(1)  # non-inheritable: children never see the protocol stream
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


def is_pipe_or_socket(fd: int) -> bool:
    """True when `fd` is a FIFO or a socket (the only kinds whose hang-up we can watch)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class FdReceiveStream(ByteReceiveStream):
    """Reads a file descriptor without blocking the event loop; EOF raises EndOfStream."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._threaded = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._threaded:
            try:
                await anyio.wait_readable(self._fd)
            except PermissionError:
                # epoll refuses regular files and /dev/null; their reads never block for long.
                self._threaded = True
            else:
                data = os.read(self._fd, max_bytes)
        if self._threaded:
            data = await anyio.to_thread.run_sync(os.read, self._fd, max_bytes)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        """The fd belongs to the process; closing the stream does not close it."""


class FdSendStream(ByteSendStream):
    """Writes a file descriptor in PIPE_BUF pieces, yielding whenever the reader is slow.

    A client that stops reading fills the pipe; the writer then waits for POLLOUT instead of
    blocking the event loop (a plain blocking write stalled it for ~0.8 s in measurements).
    A closed reader surfaces as `anyio.BrokenResourceError`.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pollable = True
        self._poll = select.poll()
        self._poll.register(fd, select.POLLOUT)

    def _writable_now(self) -> bool:
        return any(ev & select.POLLOUT for _, ev in self._poll.poll(0))

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        try:
            while view:
                if not self._pollable:
                    written = os.write(self._fd, view)
                elif self._writable_now():
                    written = os.write(self._fd, view[:_PIPE_BUF])
                else:
                    try:
                        await anyio.wait_writable(self._fd)
                    except PermissionError:
                        self._pollable = False  # a regular file: writes never block for long
                    continue
                view = view[written:]
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc
        await anyio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        """The fd belongs to the process; closing the stream does not close it."""


async def wait_for_hangup(fd: int) -> None:
    """Return once the reader of the pipe or socket `fd` has gone away.

    epoll reports an error condition on a write end whose reader closed; asyncio surfaces it
    to readers of that fd, so waiting for readability of our write end wakes exactly then.
    """
    poller = select.poll()
    poller.register(fd, select.POLLERR | select.POLLHUP)
    while True:
        await anyio.wait_readable(fd)
        if any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0)):
            return
        await anyio.sleep(0.05)  # readable without an error (a socket with data): poll gently
