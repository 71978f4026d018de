"""`BoundedBody` (acp_server/tools/builtin/web_body.py): content codings undone in bounded
steps give back exactly what was encoded, fed in chunks of any size, and stop at the cap; every
member of a gzip body is undone, and what follows the end of the data is left out and said."""

from __future__ import annotations

import random
import zlib

import pytest

from acp_server.tools.builtin.web_body import (
    MAX_MEMBERS,
    STEP,
    BodyRefused,
    BoundedBody,
    codings,
)

WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15, "raw deflate": -15}


def encode(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


def sample() -> bytes:
    """Half text that compresses well, half random bytes that do not; over several steps."""
    rng = random.Random(35)
    words = b" ".join(rng.choice([b"fetch", b"page", b"cap", b"gzip"]) for _ in range(60_000))
    return words + rng.randbytes(5 * STEP)


def feed(body: BoundedBody, wire: bytes, chunk: int) -> bool:
    """Add `wire` in chunks of `chunk` bytes until the body is full; whether it was."""
    return any(body.add(wire[start : start + chunk]) for start in range(0, len(wire), chunk))


@pytest.mark.parametrize("coding", list(WBITS))
@pytest.mark.parametrize("chunk", [1, 1000, 65536, 1 << 30])
def test_one_coding_gives_back_the_data_in_chunks_of_any_size(coding: str, chunk: int) -> None:
    data = sample()[: 40_000 if chunk == 1 else None]
    body = BoundedBody(len(data), coding.replace("raw ", ""))
    assert not feed(body, encode(data, WBITS[coding]), chunk)
    assert body.data == data and not body.cut


def test_two_codings_are_undone_from_the_last() -> None:
    data = sample()
    wire = encode(encode(data, 15), 31)  # deflate first, then gzip on top
    body = BoundedBody(len(data), "deflate, gzip")
    assert not feed(body, wire, 4096)
    assert body.data == data and body.codings == ["deflate", "gzip"]


@pytest.mark.parametrize("content_encoding", ["", "identity", "gzip", "gzip, gzip"])
def test_the_cap_keeps_exactly_the_head(content_encoding: str) -> None:
    data = sample()
    wire = data
    for coding in codings(content_encoding):
        wire = encode(wire, WBITS[coding])
    body = BoundedBody(100_000, content_encoding)
    assert feed(body, wire, 8192)
    assert body.cut and body.data == data[:100_000]


def test_an_answer_exactly_the_cap_is_not_cut() -> None:
    body = BoundedBody(5000, "")
    assert not feed(body, b"a" * 5000, 1000)
    assert not body.cut and len(body.data) == 5000


def test_an_inner_coding_that_yields_nothing_still_stops_at_the_cap() -> None:
    """Empty stored blocks (5 bytes each, no output) inside gzip: the outer stage's output
    reaches the cap, so the work ends there too, with nothing decoded."""
    empty_blocks = b"\x00\x00\x00\xff\xff" * 200_000  # 1 MB of raw deflate giving no bytes
    body = BoundedBody(50_000, "deflate, gzip")
    assert feed(body, encode(empty_blocks, 31), 4096)
    assert body.cut and body.data == b""


@pytest.mark.parametrize(
    ("content_encoding", "said"),
    [
        ("br", "encoded as 'br', which web_fetch did not ask for"),
        ("gzip, zstd", "encoded as 'zstd'"),
        ("gzip, gzip, gzip", "encoded 3 times over"),
    ],
)
def test_other_codings_and_deeper_stacks_are_refused(content_encoding: str, said: str) -> None:
    with pytest.raises(BodyRefused, match=said):
        BoundedBody(1000, content_encoding)


@pytest.mark.parametrize("chunk", [1, 7, 65536])
def test_every_member_of_a_gzip_body_is_undone(chunk: int) -> None:
    """RFC 1952 allows members one after the other (`cat a.gz b.gz`); only the first was read
    before, without a word."""
    parts = [b"first member. ", sample()[:30_000], b" last member."]
    wire = b"".join(encode(part, WBITS["gzip"]) for part in parts)
    body = BoundedBody(1 << 20, "gzip")
    assert not feed(body, wire, chunk)
    assert body.data == b"".join(parts)
    assert body.left_out is None and not body.cut


@pytest.mark.parametrize(
    ("coding", "said"),
    [
        (
            "gzip",
            "the bytes after the end of the answer's gzip data are not gzip and were left out",
        ),
        ("deflate", "the bytes after the end of the answer's deflate data were left out"),
    ],
)
def test_what_follows_the_end_of_the_data_is_left_out_and_said(coding: str, said: str) -> None:
    wire = encode(b"the body", WBITS[coding]) + b"GARBAGE" * 100
    body = BoundedBody(1 << 20, coding)
    assert feed(body, wire, 5)  # read no more once the rest is known to be of no use
    assert body.data == b"the body" and not body.cut
    assert body.left_out == said


def test_a_gzip_body_of_too_many_members_stops_and_says_so() -> None:
    """2 MiB of empty members would be 100,000 zlib states (3 s of the event loop)."""
    wire = encode(b"x", WBITS["gzip"]) * (MAX_MEMBERS + 5)
    body = BoundedBody(1 << 20, "gzip")
    assert feed(body, wire, 65536)
    assert body.data == b"x" * MAX_MEMBERS
    assert body.left_out == (
        f"the answer's gzip data has more than {MAX_MEMBERS} members; the rest was left out"
    )
