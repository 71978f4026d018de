"""How much of a response body `web_fetch` keeps: the bytes on the wire and every content
coding undone on them, each stage stopped at the cap, so no answer takes more memory than a
small multiple of it, however well it compresses.

httpx undoes a `Content-Encoding` one received chunk at a time, each chunk whole: 658 bytes
of `gzip, gzip` became 300 MiB before any cap could look (issue 35). So the body is read raw
and undone here with zlib, asking it for at most `STEP` bytes per call. gzip and deflate are
asked for and undone, at most `MAX_CODINGS` deep; any other coding is refused, naming it.
See docs/rfc/implemented/feature/2026-12-01-web-fetch.md.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import httpx

ACCEPT_ENCODING = "gzip, deflate"
MAX_CODINGS = 2
"""Codings undone on one answer: one is the norm; two is a server compressing what was
stored compressed. Each is a zlib state of about 40 KiB, and a header may list thousands."""
STEP = 64 * 1024
"""The most bytes one decoding call returns."""
MAX_MEMBERS = 1000
"""gzip members undone one after the other in one answer. Each costs a new zlib state (about
30 us): 2 MiB of empty members would be 100,000 of them, 3 s of the event loop. Blocked gzip
(BGZF) of 2 MiB is 32."""

_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class BodyRefused(Exception):
    """An answer whose coding web_fetch does not undo, or cannot (the message says why)."""


class _Full(Exception):
    """A stage reached the cap with more to come."""


class _Ended(Exception):
    """A stage will use nothing more of its input (its `left_out` says why)."""


class _Inflater:
    """One content coding undone in steps of at most `STEP` bytes of output. A gzip body may
    be several members one after the other (RFC 1952: `cat a.gz b.gz`, or blocked gzip), each
    undone in turn, up to `MAX_MEMBERS`; what follows the end otherwise is left out, and
    `left_out` says so."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self.produced = 0
        self.members = 1
        self.left_out: str | None = None
        self._state = zlib.decompressobj(_WBITS[coding])
        self._member_produced = 0
        # "deflate" is meant as zlib-wrapped, but some servers send it raw: while the two
        # bytes of a zlib header have not passed, what came is kept to start over raw.
        self._head: bytes | None = b"" if coding == "deflate" else None

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """The output for `data`, piece by piece; `_Ended` once nothing more of the input
        will be used."""
        if self._head is not None:
            self._head += data
        while True:
            if self._state.eof:
                data = self._state.unused_data + data
                if not data:
                    return
                self._next_member()
            state = self._state
            try:
                out = state.decompress(data, STEP)
            except zlib.error as exc:
                if self.members > 1 and not self._member_produced:
                    self._end(
                        "the bytes after the end of the answer's gzip data are not gzip and "
                        "were left out"
                    )
                if self._head is None:
                    raise BodyRefused(
                        f"the answer's {self.coding} encoding is corrupt ({exc})"
                    ) from None
                data, self._head = self._head, None
                self._state = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            if self._head is not None and len(self._head) >= 2:
                self._head = None  # a zlib header passed
            data = state.unconsumed_tail
            self._member_produced += len(out)
            if out:
                yield out
            # A full step may leave output inside zlib: ask again with no input.
            if not state.eof and not data and len(out) < STEP:
                return

    def _next_member(self) -> None:
        """Start on what follows the end of the stream: gzip's next member, if allowed."""
        if self.coding not in ("gzip", "x-gzip"):
            self._end(f"the bytes after the end of the answer's {self.coding} data were left out")
        if self.members >= MAX_MEMBERS:
            self._end(
                f"the answer's gzip data has more than {MAX_MEMBERS} members; the rest was left out"
            )
        self.members += 1
        self._member_produced = 0
        self._head = None
        self._state = zlib.decompressobj(_WBITS[self.coding])

    def _end(self, sentence: str) -> NoReturn:
        self.left_out = sentence
        raise _Ended


class BoundedBody:
    """The body of one answer as it arrives: `add` raw chunks until it says to read no more;
    `data` is then at most `limit` bytes, `cut` whether more was there, `left_out` what a
    coding could not use (data after its end)."""

    def __init__(self, limit: int, content_encoding: str) -> None:
        self.limit = limit
        self.codings = codings(content_encoding)
        # Listed in the order they were applied: undone from the last.
        self._inflaters = [_Inflater(coding) for coding in reversed(self.codings)]
        self._wire = 0
        self._out = bytearray()
        self.cut = False
        self.left_out: str | None = None

    @property
    def data(self) -> bytes:
        return bytes(self._out)

    def add(self, chunk: bytes) -> bool:
        """Take the next chunk from the wire; True once the cap is reached or the rest would
        not be used (read no more)."""
        room = self.limit - self._wire
        self._wire += len(chunk)
        try:
            if len(chunk) > room:
                self._push(0, chunk[:room])
                raise _Full
            self._push(0, chunk)
        except _Full:
            self.cut = True
        except _Ended:
            self.left_out = next(i.left_out for i in self._inflaters if i.left_out)
        return self.cut or self.left_out is not None

    def _push(self, level: int, data: bytes) -> None:
        if level == len(self._inflaters):
            room = self.limit - len(self._out)
            self._out += data[:room]
            if len(data) > room:
                raise _Full
            return
        inflater = self._inflaters[level]
        for piece in inflater.pieces(data):
            room = self.limit - inflater.produced
            inflater.produced += len(piece)
            # An inner coding may shrink what an outer one gave (or give nothing for it):
            # every stage has the cap, so the work is bounded too.
            self._push(level + 1, piece[:room])
            if len(piece) > room:
                raise _Full


def codings(content_encoding: str) -> list[str]:
    """The codings a `Content-Encoding` value lists (identity dropped), or `BodyRefused`."""
    listed = [part.strip().lower() for part in content_encoding.split(",")]
    found = [coding for coding in listed if coding and coding != "identity"]
    unknown = [coding for coding in found if coding not in _WBITS]
    if unknown:
        raise BodyRefused(
            f"the answer is encoded as {unknown[0][:40]!r}, which web_fetch did not ask for "
            f"(it asks for {ACCEPT_ENCODING} or none) and does not decode"
        )
    if len(found) > MAX_CODINGS:
        raise BodyRefused(
            f"the answer is encoded {len(found)} times over; web_fetch undoes at most "
            f"{MAX_CODINGS} codings"
        )
    return found


async def read_body(response: httpx.Response, limit: int) -> BoundedBody:
    """Read `response` up to `limit` bytes at every stage; the rest is never downloaded."""
    body = BoundedBody(limit, response.headers.get("content-encoding", ""))
    async for chunk in response.aiter_raw():
        if body.add(chunk):
            break  # the response is closed by the caller: the rest never comes
    return body
