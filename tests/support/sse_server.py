"""A tiny HTTP/1.1 server on 127.0.0.1 for the provider tests, written on anyio TCP.

It answers each request with the next queued `Reply` (status, headers, body pieces sent with
an optional delay between them, framed chunked, by connection close or by content-length;
optionally cut short, held open, or dropped before any answer), records every request it saw
(`Seen`: method, path, headers, body) and notices when the client closes the connection
while a reply is in progress (`Seen.closed`, `Seen.closed_at`).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from anyio.abc import SocketAttribute, SocketStream

STREAMS = Path(__file__).resolve().parents[1] / "data" / "streams"


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    delay: float = 0.0
    """Seconds to wait before each piece after the first."""
    head_delay: float = 0.0
    """Seconds to wait before sending the status line and headers."""
    first_delay: float = 0.0
    """Seconds to wait before the first piece (after the headers)."""
    framing: Literal["chunked", "close", "length"] = "chunked"
    cut: bool = False
    """Close the connection after the pieces without ending the body properly."""
    hold: bool = False
    """After the pieces, keep the connection open until the client closes it."""
    drop: bool = False
    """Close the connection without answering at all."""


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    closed: anyio.Event = field(default_factory=anyio.Event)
    closed_at: float | None = None

    def json(self) -> Any:
        return json.loads(self.body)


def sse_reply(text: str, **kwargs: Any) -> Reply:
    """A 200 text/event-stream reply whose pieces are `text` split at blank lines (one piece
    per event), as a server would flush them."""
    events = [e for e in text.replace("\r\n", "\n").split("\n\n") if e.strip()]
    return Reply(chunks=[(e + "\n\n").encode() for e in events], **kwargs)


def recorded(name: str, **kwargs: Any) -> Reply:
    """A reply replaying the recorded stream tests/data/streams/NAME.sse."""
    return sse_reply((STREAMS / f"{name}.sse").read_text(encoding="utf-8"), **kwargs)


def openai_chunks(chunks: Iterable[dict[str, Any]], done: bool = True) -> Reply:
    """A reply of OpenAI chunks (`data: {json}`), then `data: [DONE]`."""
    pieces = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks]
    if done:
        pieces.append(b"data: [DONE]\n\n")
    return Reply(chunks=pieces)


def anthropic_events(events: Iterable[dict[str, Any]]) -> Reply:
    """A reply of Anthropic events (`event: TYPE` + `data: {json}`)."""
    return Reply(chunks=[f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events])


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    """A JSON body (an error, or a non-streamed answer) with a content-length."""
    return Reply(
        status=status,
        chunks=[json.dumps(body).encode()],
        headers={"content-type": "application/json", **(headers or {})},
        framing="length",
    )


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}


class FakeServer:
    """Serves queued replies; use `serve()`."""

    def __init__(self, replies: Iterable[Reply]) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.requests: list[Seen] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def handle(self, stream: SocketStream) -> None:
        buffer = b""
        async with stream:
            while True:
                try:
                    parsed = await _read_request(stream, buffer)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return
                if parsed is None:
                    return
                seen, buffer = parsed
                self.requests.append(seen)
                reply = (
                    self.replies.popleft()
                    if self.replies
                    else json_reply(
                        500, {"error": {"message": "the fake server has no reply queued"}}
                    )
                )
                if reply.drop:
                    return
                if not await _respond(stream, reply, seen):
                    return


async def _read_request(stream: SocketStream, buffer: bytes) -> tuple[Seen, bytes] | None:
    while b"\r\n\r\n" not in buffer:
        try:
            buffer += await stream.receive()
        except anyio.EndOfStream:
            return None
    head, _, buffer = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(buffer) < length:
        buffer += await stream.receive()
    body, buffer = buffer[:length], buffer[length:]
    return Seen(method, path, headers, body, time.monotonic()), buffer


async def _respond(stream: SocketStream, reply: Reply, seen: Seen) -> bool:
    """Send `reply`; True when the connection may serve another request."""

    def mark_closed() -> None:
        if seen.closed_at is None:
            seen.closed_at = time.monotonic()
            seen.closed.set()

    headers = dict(reply.headers)
    if reply.framing == "chunked":
        headers["transfer-encoding"] = "chunked"
    elif reply.framing == "close":
        headers["connection"] = "close"
    else:
        headers["content-length"] = str(sum(len(c) for c in reply.chunks))
    reason = _REASONS.get(reply.status, "Status")
    head = f"HTTP/1.1 {reply.status} {reason}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"

    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            # The client sends nothing while a reply is in progress: any return is a close.
            with suppress(anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.receive()
            mark_closed()
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        try:
            if reply.head_delay:
                await anyio.sleep(reply.head_delay)
            await stream.send(head.encode())
            for i, chunk in enumerate(reply.chunks):
                wait = reply.first_delay if i == 0 else reply.delay
                if wait:
                    await anyio.sleep(wait)
                if reply.framing == "chunked":
                    chunk = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
                await stream.send(chunk)
            if reply.hold:
                await anyio.sleep_forever()
            if reply.framing == "chunked" and not reply.cut:
                await stream.send(b"0\r\n\r\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            mark_closed()
        tg.cancel_scope.cancel()
    if seen.closed_at is not None:
        return False
    return reply.framing != "close" and not reply.cut


@asynccontextmanager
async def serve(*replies: Reply) -> AsyncIterator[FakeServer]:
    """Run a FakeServer on 127.0.0.1 (a free port) for the duration of the block."""
    server = FakeServer(replies)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    server.port = listener.extra(SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, server.handle)
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()


async def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port: int = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    return port
