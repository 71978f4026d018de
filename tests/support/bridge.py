"""The ACP bridge in this process: a real `Peer`, `AcpConnection` and journal store on memory
streams, with a model double, so a test can install listeners on a session's agent and watch
what happens between the runtime and the wire.

The subprocess harness (tests/support/agent_process.py) shows what a client sees; this one is
for ordering and causes a client cannot see: every frame the agent writes is recorded, in
order, into `Bridge.events`, where a test may add its own observations (an fsync returning,
say) to compare against them. Every agent->client frame is validated against the ACP schema.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from acp_server.acp.connection import AcpConnection
from acp_server.acp.options import ServerOptions
from acp_server.agent.agent import Agent
from acp_server.models.base import ModelProvider
from acp_server.process import ProcessRegistry
from acp_server.rpc.dispatch import Router
from acp_server.rpc.peer import Peer
from acp_server.session.journal import JournalStore
from tests.support.memory import MemoryByteReceive, MemoryByteSend
from tests.support.wire import validate_agent_frame

DEADLINE = 10.0
"""Generous: only there so a broken bridge fails a test instead of hanging the suite."""

Event = tuple[str, Any]
"""("write", frame) for each frame the agent wrote; tests add their own kinds."""


class RecordingSend(ByteSendStream):
    """The agent's stdout: notes each frame in `events` as it is handed to the transport."""

    def __init__(self, inner: ByteSendStream, events: list[Event]) -> None:
        self._inner = inner
        self._events = events

    async def send(self, item: bytes) -> None:
        for line in item.splitlines():
            self._events.append(("write", json.loads(line)))
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


class Bridge:
    """The client side of an in-process bridge."""

    def __init__(
        self,
        connection: AcpConnection,
        data_dir: Path,
        to_agent: MemoryObjectSendStream[bytes],
        from_agent: MemoryObjectReceiveStream[bytes],
        events: list[Event],
    ) -> None:
        self.connection = connection
        self.data_dir = data_dir
        self.events = events
        self.frames: list[dict[str, Any]] = []
        self._to_agent = to_agent
        self._from_agent = from_agent
        self._ids = itertools.count(1)
        self._methods: dict[int, str] = {}
        self._arrived = anyio.Event()

    def agent(self, session_id: str) -> Agent:
        """The runtime agent behind an ACP session."""
        session = self.connection.context.sessions.get(session_id)
        assert session is not None and session.agent is not None, session_id
        return session.agent

    def journal_path(self, session_id: str) -> Path:
        """Where the session's journal lives."""
        return JournalStore(self.data_dir).path_for(session_id)

    async def send_request(self, method: str, params: dict[str, Any]) -> int:
        """Write a request; returns its id (see `response`)."""
        request_id = next(self._ids)
        self._methods[request_id] = method
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self._to_agent.send(json.dumps(frame).encode() + b"\n")
        return request_id

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        frame = {"jsonrpc": "2.0", "method": method, "params": params}
        await self._to_agent.send(json.dumps(frame).encode() + b"\n")

    async def response(self, request_id: int) -> dict[str, Any]:
        """Wait for the response to one of our requests."""
        with anyio.fail_after(DEADLINE):
            while True:
                for frame in self.frames:
                    if frame.get("id") == request_id and "method" not in frame:
                        return frame
                await self._next_frame()

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request and its result (asserts it succeeded)."""
        answer = await self.response(await self.send_request(method, params))
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    async def new_session(self, cwd: Path) -> str:
        """Initialize, create a session and wait for what follows its response (its slash
        commands), so that a test's next request starts after everything session/new sends."""
        await self.call("initialize", {"protocolVersion": 1})
        result = await self.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id: str = result["sessionId"]
        await self.update(session_id, "available_commands_update")
        # The first session's agent is wired by the warm-up that follows its answer.
        await self.connection.warm_up()
        return session_id

    async def update(self, session_id: str, kind: str) -> dict[str, Any]:
        """Wait for the first `session/update` of this kind for the session."""
        with anyio.fail_after(DEADLINE):
            while True:
                for frame in self.frames:
                    is_update = frame.get("method") == "session/update"
                    params = frame["params"] if is_update else {}
                    if params.get("sessionId") == session_id:
                        update: dict[str, Any] = params["update"]
                        if update["sessionUpdate"] == kind:
                            return update
                await self._next_frame()

    async def _next_frame(self) -> None:
        arrived = self._arrived
        await arrived.wait()

    async def read_frames(self) -> None:
        """Collect the agent's frames until it stops writing (runs in the bridge's task group)."""
        buffer = b""
        async for chunk in self._from_agent:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                frame: dict[str, Any] = json.loads(line)
                method = self._methods.get(frame["id"]) if "id" in frame else None
                validate_agent_frame(frame, None if "method" in frame else method)
                self.frames.append(frame)
            self._arrived.set()
            self._arrived = anyio.Event()


@asynccontextmanager
async def in_process_bridge(
    model: ModelProvider, data_dir: Path, **options: Any
) -> AsyncIterator[Bridge]:
    """A bridge serving one client on memory streams; on exit the client's input ends and the
    connection is disposed as the server would at end of input. `options` are more
    `ServerOptions` (a `mode`, say)."""
    events: list[Event] = []
    to_agent, agent_in = anyio.create_memory_object_stream[bytes](100)
    agent_out, from_agent = anyio.create_memory_object_stream[bytes](1000)
    dispatcher = Router()
    peer = Peer(
        MemoryByteReceive(agent_in), RecordingSend(MemoryByteSend(agent_out), events), dispatcher
    )
    try:
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:
                server = ServerOptions(data_dir=data_dir, model=model, model_spec="fake", **options)
                connection = AcpConnection(peer, tg, server, ProcessRegistry())
                connection.register(dispatcher)
                bridge = Bridge(connection, data_dir, to_agent, from_agent, events)
                served = anyio.Event()

                async def serve() -> None:
                    try:
                        await peer.run()
                    finally:
                        served.set()

                tg.start_soon(serve)
                tg.start_soon(bridge.read_frames)
                try:
                    yield bridge
                finally:
                    to_agent.close()
                    await served.wait()
                    await connection.dispose()
                    agent_out.close()
    finally:
        for stream in (to_agent, agent_in, agent_out, from_agent):
            stream.close()
