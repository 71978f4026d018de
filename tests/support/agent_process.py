"""The real `acp-server` process, driven by the official ACP Python SDK client."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from acp import spawn_agent_process
from acp.connection import StreamDirection, StreamEvent

from .wire import validate_agent_frame

SERVER = str(Path(sys.executable).with_name("acp-server"))

HANG_UP_WITHIN = 30.0
"""How long a finished test reads what the agent still sends before the SDK's hard close (a
bound against an agent that never ends, not a measure: the agent exits at once when idle)."""


@dataclass
class FrameLog:
    """Every frame of the connection, in wire order; agent frames are schema-checked."""

    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    _methods: dict[Any, str] = field(default_factory=dict)

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.OUTGOING:
            self.sent.append(message)
            if "method" in message and "id" in message:
                self._methods[message["id"]] = message["method"]
            return
        self.received.append(message)
        method = None if "method" in message else self._methods.get(message.get("id"))
        try:
            validate_agent_frame(message, method)
        except AssertionError as exc:  # the SDK swallows observer errors; keep them for later
            self.violations.append(str(exc))


class RecordingClient:
    """A minimal ACP client: records session updates."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self._arrived = anyio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self._arrived.set()

    async def wait_for_updates(self, count: int, within: float = 10.0) -> None:
        """Return once at least `count` updates have arrived."""
        with anyio.fail_after(within):
            while len(self.updates) < count:
                self._arrived = anyio.Event()
                await self._arrived.wait()


@asynccontextmanager
async def running_agent(
    *args: str,
    client: Any = None,
    env: dict[str, str] | None = None,
    stderr: Any = None,
    command: Sequence[str] = (SERVER,),
) -> AsyncIterator[tuple[Any, Any, FrameLog, Any]]:
    """Spawn `acp-server ARGS` (or `command ARGS`); yield (connection, process, frame log,
    client). The agent's stderr is ours unless `stderr` names a file to write it to."""
    frames = FrameLog()
    client = client if client is not None else RecordingClient()
    program, *prefix = command
    async with spawn_agent_process(
        client,
        program,
        *prefix,
        *args,
        env={**os.environ, **(env or {})},
        transport_kwargs={"stderr": stderr},
        observers=[frames.observe],
    ) as (connection, process):
        yield connection, process, frames, client
        await read_to_the_end(connection, process)
    assert not frames.violations, "\n".join(frames.violations)


async def read_to_the_end(connection: Any, process: Any) -> None:
    """Hang up the way a client that is done does: close the agent's stdin, then read what it
    still sends until it closes stdout.

    The agent answers a request and then sends what must follow the answer on the wire (the
    notices and announcements after a `session/new` or `session/load` response); at end of
    input it finishes that work, drains its output and exits. The SDK's own close stops reading
    first, so without this a test that leaves right after a response loses whatever the agent
    had not yet written, and its assertions about those frames (present or absent) would race.
    """
    with contextlib.suppress(OSError, RuntimeError, AttributeError):
        process.stdin.write_eof()
    receiving = connection._conn._recv_task  # the SDK's reader: it ends at the agent's EOF
    if receiving is None:
        return
    with anyio.move_on_after(HANG_UP_WITHIN):
        await asyncio.wait({receiving})
