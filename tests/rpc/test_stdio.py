"""Byte streams over raw file descriptors (acp_server/rpc/stdio.py), on real pipes and files:
what is written arrives whole, end of input is `EndOfStream`, a regular file (which epoll
refuses) is read and written all the same, a closed reader is `BrokenResourceError`, and its
hang-up is seen. The fd-level guard of stdout needs a process of its own:
tests/e2e/test_server_lifecycle.py::test_stray_print_and_child_output_never_reach_the_protocol_stream."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from acp_server.rpc.stdio import (
    FdReceiveStream,
    FdSendStream,
    is_pipe_or_socket,
    wait_for_hangup,
)

pytestmark = pytest.mark.anyio

HANG_GUARD_S = 30


class Pipe:
    """A pipe whose ends a test may close; `pipe()` closes the rest (never an fd twice: the
    number may already belong to another file of this process)."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.open = {self.read_fd, self.write_fd}

    def close(self, fd: int) -> None:
        self.open.discard(fd)
        os.close(fd)


@contextmanager
def pipe() -> Iterator[Pipe]:
    """A new pipe, its open ends closed afterwards."""
    made = Pipe()
    try:
        yield made
    finally:
        for fd in list(made.open):
            made.close(fd)


async def read_all(stream: FdReceiveStream) -> bytes:
    """Everything up to the end of input."""
    data = b""
    while True:
        try:
            data += await stream.receive()
        except anyio.EndOfStream:
            return data


async def test_a_write_larger_than_the_pipe_arrives_whole_and_eof_ends_the_stream() -> None:
    payload = bytes(range(256)) * 1024  # 256 KiB: more than a pipe holds, so the writer waits
    with pipe() as p:
        async with anyio.create_task_group() as tg:

            async def write_then_close() -> None:
                await FdSendStream(p.write_fd).send(payload)
                p.close(p.write_fd)

            tg.start_soon(write_then_close)
            with anyio.fail_after(HANG_GUARD_S):
                received = await read_all(FdReceiveStream(p.read_fd))
    assert received == payload


async def test_a_regular_file_is_written_and_read_though_epoll_refuses_it(tmp_path: Path) -> None:
    path = tmp_path / "frames"
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        await FdSendStream(fd).send(b'{"jsonrpc":"2.0"}\n' * 3)
        os.lseek(fd, 0, os.SEEK_SET)
        assert await read_all(FdReceiveStream(fd)) == b'{"jsonrpc":"2.0"}\n' * 3
        assert not is_pipe_or_socket(fd)
    finally:
        os.close(fd)


async def test_a_closed_reader_is_a_broken_resource_and_its_hangup_is_seen() -> None:
    with pipe() as p:
        assert is_pipe_or_socket(p.write_fd)
        p.close(p.read_fd)
        with anyio.fail_after(HANG_GUARD_S):
            await wait_for_hangup(p.write_fd)
        with pytest.raises(anyio.BrokenResourceError):
            await FdSendStream(p.write_fd).send(b"nobody reads this\n")


async def test_closing_a_stream_leaves_its_fd_open() -> None:
    with pipe() as p:
        await FdSendStream(p.write_fd).aclose()
        await FdReceiveStream(p.read_fd).aclose()
        os.write(p.write_fd, b"still open\n")
        assert os.read(p.read_fd, 100) == b"still open\n"
