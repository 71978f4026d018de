"""A raw-frame ACP client over the real `acp-server` process: JSON lines on its pipes, no SDK
(the official Python SDK predates the newer protocol types). Every agent frame is checked by
`tests.support.newer_types.validate_frame` (schema, or the newer types' field lists).

Agent->client requests are answered by `handlers[method]` (an async function of the params
returning the result, or raising `Reply` to answer an error); a method without a handler is
answered -32601. Waiting is by events: `wait_for(predicate)` returns the first received frame
that matches.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup

from .agent_process import SERVER
from .newer_types import validate_frame

DEADLINE = 20.0
"""Generous: only there so a broken server fails a test instead of hanging the suite."""

Handler = Callable[[dict[str, Any]], Awaitable[Any]]


@dataclass
class Reply(Exception):
    """Raised by a handler: answer the agent's request with this JSON-RPC error."""

    code: int
    message: str


Validator = Callable[[dict[str, Any], str | None], None]


class RawClient:
    def __init__(
        self, process: Process, group: TaskGroup, validate: Validator = validate_frame
    ) -> None:
        self.process = process
        self.group = group
        self.validate = validate
        self.received: list[dict[str, Any]] = []
        self.arrays: list[list[dict[str, Any]]] = []
        """Every array the agent wrote (a batch's answers); its frames are in `received`."""
        self.sent: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.handlers: dict[str, Handler] = {}
        self._methods: dict[Any, str] = {}
        self._next_id = 0
        self._changed = anyio.Event()

    # -- writing ---------------------------------------------------------------------------

    async def send(self, frame: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.sent.append(frame)
        await self.process.stdin.send(json.dumps(frame).encode() + b"\n")

    async def send_batch(self, items: list[dict[str, Any]]) -> None:
        """Send `items` as one JSON-RPC batch line."""
        assert self.process.stdin is not None
        for item in items:
            if "id" in item and "method" in item:
                self._methods[item["id"]] = item["method"]
        await self.process.stdin.send(json.dumps(items).encode() + b"\n")

    async def batch(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send `items` as one JSON-RPC batch; the array that answers it."""
        seen = len(self.arrays)
        await self.send_batch(items)
        await self.wait_for(lambda _: len(self.arrays) > seen)
        return self.arrays[seen]

    async def start(self, method: str, params: dict[str, Any]) -> int:
        """Send a request; its id (see `response`)."""
        self._next_id += 1
        request_id = self._next_id
        self._methods[request_id] = method
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and wait for its response frame (result or error)."""
        return await self.response(await self.start(method, params))

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """The result of a request that must succeed."""
        frame = await self.request(method, params)
        assert "result" in frame, f"{method} failed: {frame}"
        return frame["result"]

    # -- reading ---------------------------------------------------------------------------

    async def response(self, request_id: int) -> dict[str, Any]:
        return await self.wait_for(lambda f: f.get("id") == request_id and "method" not in f)

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        with anyio.fail_after(DEADLINE):
            seen = 0
            while True:
                for frame in self.received[seen:]:
                    if predicate(frame):
                        return frame
                seen = len(self.received)
                self._changed = anyio.Event()
                await self._changed.wait()

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The `update` objects of every `session/update` received (of one session)."""
        return [
            f["params"]["update"]
            for f in self.received
            if f.get("method") == "session/update"
            and (session_id is None or f["params"]["sessionId"] == session_id)
        ]

    async def read_loop(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        async for data in self.process.stdout:
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                value = json.loads(line)
                if isinstance(value, list):  # a batch's answers: each frame taken in turn
                    self.arrays.append(value)
                    for frame in value:
                        self._take(frame)
                else:
                    self._take(value)
        self._changed.set()

    def _take(self, frame: dict[str, Any]) -> None:
        self.received.append(frame)
        method = None if "method" in frame else self._methods.get(frame.get("id"))
        try:
            self.validate(frame, method)
        except AssertionError as exc:
            self.violations.append(str(exc))
        if "method" in frame and "id" in frame:
            self.group.start_soon(self._answer, frame)
        self._changed.set()

    async def _answer(self, frame: dict[str, Any]) -> None:
        handler = self.handlers.get(frame["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": frame["id"]}
        if handler is None:
            reply["error"] = {"code": -32601, "message": f"no handler for {frame['method']}"}
        else:
            try:
                reply["result"] = await handler(frame.get("params") or {})
            except Reply as exc:
                reply["error"] = {"code": exc.code, "message": exc.message}
        await self.send(reply)


@asynccontextmanager
async def raw_agent(
    *args: str, env: dict[str, str] | None = None, validate: Validator = validate_frame
) -> AsyncIterator[RawClient]:
    """Spawn `acp-server ARGS`; yield a raw client. On exit stdin is closed and the server
    must exit 0 with every frame it wrote valid (`validate`: v1's check, or
    `tests.support.wire_v2.validate_agent_frame_v2` for a v2 client)."""
    process = await anyio.open_process(
        [SERVER, *args], env={**os.environ, **(env or {})}, stderr=None
    )
    async with process, anyio.create_task_group() as group:
        client = RawClient(process, group, validate)
        group.start_soon(client.read_loop)
        try:
            yield client
        finally:
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.fail_after(DEADLINE):
                code = await process.wait()
    assert code == 0, f"acp-server exited {code}"
    assert not client.violations, "\n".join(client.violations)


async def new_session(
    client: RawClient,
    cwd: str,
    capabilities: dict[str, Any] | None = None,
    **extra: Any,
) -> str:
    """initialize (with these client capabilities) and session/new; the session id."""
    await client.call(
        "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities or {}}
    )
    result = await client.call("session/new", {"cwd": cwd, "mcpServers": [], **extra})
    session_id: str = result["sessionId"]
    return session_id


async def new_session_v2(
    client: RawClient, cwd: str, capabilities: dict[str, Any] | None = None, **extra: Any
) -> str:
    """initialize as a v2 client (with these capabilities) and session/new; the session id."""
    await client.call(
        "initialize",
        {
            "protocolVersion": 2,
            "info": {"name": "pytest", "version": "1"},
            "capabilities": capabilities or {},
        },
    )
    result = await client.call("session/new", {"cwd": cwd, **extra})
    session_id: str = result["sessionId"]
    return session_id


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]
