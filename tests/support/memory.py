"""In-memory byte streams and a harness that plays the client side of a `Peer`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from acp_protocol.methods import MethodSpec
from acp_server.rpc.dispatch import Route, Router, RouteTable
from acp_server.rpc.peer import IncomingRequest, Peer


class MemoryByteReceive(ByteReceiveStream):
    def __init__(self, inner: MemoryObjectReceiveStream[bytes]) -> None:
        self._inner = inner

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self._inner.receive()

    async def aclose(self) -> None:
        await self._inner.aclose()


class MemoryByteSend(ByteSendStream):
    def __init__(self, inner: MemoryObjectSendStream[bytes]) -> None:
        self._inner = inner

    async def send(self, item: bytes) -> None:
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


class ClientSide:
    """Writes raw lines into the peer and reads the frames it writes back."""

    def __init__(
        self, to_peer: MemoryObjectSendStream[bytes], from_peer: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._to_peer = to_peer
        self._from_peer = from_peer
        self._buffer = b""
        self.raw_lines: list[bytes] = []

    async def write(self, line: bytes | str | dict[str, Any]) -> None:
        if isinstance(line, dict):
            line = json.dumps(line)
        if isinstance(line, str):
            line = line.encode()
        await self._to_peer.send(line + b"\n")

    async def write_raw(self, data: bytes) -> None:
        await self._to_peer.send(data)

    def close_input(self) -> None:
        self._to_peer.close()

    async def read(self, within: float = 5.0) -> dict[str, Any]:
        with anyio.fail_after(within):
            while b"\n" not in self._buffer:
                self._buffer += await self._from_peer.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.raw_lines.append(line)
        frame: dict[str, Any] = json.loads(line)
        return frame

    async def read_all(self) -> list[dict[str, Any]]:
        """Every frame until the peer stops writing."""
        frames = []
        async for chunk in self._from_peer:
            self._buffer += chunk
        for line in self._buffer.split(b"\n"):
            if line:
                self.raw_lines.append(line)
                frames.append(json.loads(line))
        self._buffer = b""
        return frames


@asynccontextmanager
async def peer_harness(
    dispatcher: Router, **peer_options: Any
) -> AsyncIterator[tuple[Peer, ClientSide]]:
    """A running Peer on memory streams; yields (peer, client side)."""
    to_peer, peer_in = anyio.create_memory_object_stream[bytes](100)
    peer_out, from_peer = anyio.create_memory_object_stream[bytes](100)
    peer = Peer(MemoryByteReceive(peer_in), MemoryByteSend(peer_out), dispatcher, **peer_options)
    client = ClientSide(to_peer, from_peer)
    async with anyio.create_task_group() as tg:

        async def serve() -> None:
            try:
                await peer.run()
            finally:
                peer_out.close()

        tg.start_soon(serve)
        try:
            yield peer, client
        finally:
            client.close_input()
    for stream in (to_peer, peer_in, peer_out, from_peer):
        stream.close()


def route_table(
    handlers: Mapping[str, Callable[[IncomingRequest, Any], Awaitable[Any]]],
    params: Mapping[str, type] | None = None,
) -> RouteTable:
    """A table routing each named request to its handler, by a method table made for it: each
    method's params decode as `params[name]`, raw JSON by default."""
    types = params or {}
    rows = {
        name: MethodSpec(name, types.get(name, msgspec.Raw), msgspec.Raw, "agent")
        for name in handlers
    }
    return RouteTable.of(rows, [Route(rows[name], handler) for name, handler in handlers.items()])
