"""Newline-delimited framing (acp_server/rpc/framing.py), on a memory stream: a line split over
many reads is one frame, CRLF and blank lines are accepted, an over-long line is skipped as
`OVERSIZED` without being kept and the next line reads as usual, and a last line without its
newline still counts. What the peer answers to each: tests/rpc/test_peer_framing.py."""

from __future__ import annotations

import anyio
import pytest

from acp_server.rpc.framing import OVERSIZED, LineReader
from tests.support.memory import MemoryByteReceive

pytestmark = pytest.mark.anyio


async def frames(chunks: list[bytes], max_line_bytes: int = 64) -> list[object]:
    """Every frame a reader yields from `chunks`, read one by one, until the end of input."""
    send, receive = anyio.create_memory_object_stream[bytes](len(chunks))
    for chunk in chunks:
        send.send_nowait(chunk)
    send.close()
    found: list[object] = []
    with receive:
        reader = LineReader(MemoryByteReceive(receive), max_line_bytes)
        while True:
            try:
                found.append(await reader.receive_line())
            except anyio.EndOfStream:
                return found


async def test_a_line_split_over_reads_is_one_frame_and_two_in_one_read_are_two() -> None:
    assert await frames([b'{"a"', b":", b"1}\n", b"[1]\n[2]\n"]) == [b'{"a":1}', b"[1]", b"[2]"]


async def test_crlf_endings_and_blank_lines_are_accepted() -> None:
    assert await frames([b"one\r\n\r\n  \n\ntwo\r\n"]) == [b"one", b"two"]


async def test_an_over_long_line_is_skipped_and_the_next_one_is_read() -> None:
    long_line = [b"x" * 40, b"x" * 40, b"x" * 40 + b"\n"]  # never held whole: 120 > 64
    assert await frames([*long_line, b"after\n"]) == [OVERSIZED, b"after"]


async def test_a_line_over_the_limit_in_one_read_is_oversized_too() -> None:
    assert await frames([b"y" * 65 + b"\nok\n"]) == [OVERSIZED, b"ok"]
    assert await frames([b"z" * 64 + b"\n"]) == [b"z" * 64]


async def test_a_last_line_without_its_newline_still_counts() -> None:
    assert await frames([b"first\n", b"last\r"]) == [b"first", b"last"]
    assert await frames([b"first\n", b"w" * 100]) == [b"first", OVERSIZED]


async def test_no_input_is_the_end_of_the_stream() -> None:
    assert await frames([]) == []
