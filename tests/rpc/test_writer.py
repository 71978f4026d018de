"""The single ordered writer (acp_server/rpc/writer.py), on a memory stream: frames leave in the
order they were queued, `close()` lets the queue drain before `run` returns, and a client that
stops reading breaks the writer once, after which sends are no-ops and no waiter is stranded.
Backpressure against a real process that never reads: tests/e2e/test_backpressure.py."""

from __future__ import annotations

import json
import logging

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream

from acp_server.rpc.writer import FrameWriter
from tests.support.memory import MemoryByteSend

pytestmark = pytest.mark.anyio

HANG_GUARD_S = 30


def written(receive: MemoryObjectReceiveStream[bytes]) -> list[bytes]:
    """What the writer has sent so far, in order."""
    chunks = []
    while True:
        try:
            chunks.append(receive.receive_nowait())
        except anyio.WouldBlock:
            return chunks


async def test_frames_leave_in_the_order_they_were_queued_and_close_drains_them() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](1000)
    writer = FrameWriter(MemoryByteSend(send))
    with send, receive:
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            for n in range(200):
                await writer.send({"n": n})
            await writer.sent()
            writer.close()
        received = b"".join(written(receive))
    assert [json.loads(line)["n"] for line in received.splitlines()] == list(range(200))


async def test_a_client_gone_breaks_the_writer_and_nothing_waits_on_it_after(
    caplog: pytest.LogCaptureFixture,
) -> None:
    send, receive = anyio.create_memory_object_stream[bytes](1)
    receive.close()  # the client stopped reading
    writer = FrameWriter(MemoryByteSend(send))
    with send, caplog.at_level(logging.INFO, "acp_server.rpc.writer"):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            await writer.send({"lost": True})
            await writer.broken.wait()
        # `run` has returned; a hang guard only, in case a waiter were stranded:
        with anyio.fail_after(HANG_GUARD_S):
            await writer.send({"after": True})
            await writer.drained()
            await writer.sent()
            await writer.room()
    assert [r.getMessage() for r in caplog.records] == [
        "client stopped reading our output (BrokenResourceError)"
    ]


async def test_sent_waits_only_for_what_was_queued_before_it() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](1000)
    writer = FrameWriter(MemoryByteSend(send))
    with send, receive:
        async with anyio.create_task_group() as tg:
            await writer.send({"first": True})
            tg.start_soon(writer.run)
            await writer.sent()
            assert json.loads(receive.receive_nowait()) == {"first": True}
            writer.close()
