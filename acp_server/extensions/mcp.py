"""MCP servers from `session/new`, `session/load` and `session/resume` become session tools.

`McpServers` connects to every configured server in the background (one task per server in
the connection's task group), so the session answers at once; a prompt waits for them
(bounded) through `ready()`. Each server's tools appear as `mcp__<server>__<tool>`. A server
that fails is logged and reported once (`take_failures()`), never failing the session.

stdio servers are started by the process package's `spawn`, not by the SDK's `stdio_client`,
so that each is the leader of its own process group, registered with the server's process
registry for shutdown, and its whole tree is stopped and joined when the session closes.

The `mcp` SDK is imported only inside functions: the server must answer `initialize` (and
sessions without MCP servers) without paying for it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from subprocess import PIPE
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import Process, TaskGroup

from acp_server.cancellation import TurnSignal
from acp_server.process import ProcessRegistry, spawn
from acp_server.redaction import redact
from acp_server.tools.base import Location, Tool, ToolCallContext, ToolKind, ToolOutput

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp import ClientSession
    from mcp.shared.message import SessionMessage
    from mcp.types import CallToolResult
    from mcp.types import Tool as McpToolInfo

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 30.0
"""How long one server may take to start, initialize and list its tools."""
READY_TIMEOUT = 10.0
"""How long a prompt waits for servers still connecting."""
STOP_GRACE = 1.0
"""After stdin closes, how long a stdio server may take to exit before its group is signalled."""
CANCEL_NOTIFY_TIMEOUT = 1.0

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """The name the model calls an MCP tool by: `mcp__<server>__<tool>` (safe characters)."""
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server of a session, as the client configured it: `stdio` (`command`, `args`,
    `env`) or `http`/`sse` (`url`, `headers`). `transport` may name one we cannot reach: that
    server then fails with a message saying so."""

    name: str
    transport: str = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


# -------------------------------------------------------------------------------- tools


class McpTool:
    """One tool of a connected MCP server, as a session tool."""

    def __init__(self, server: str, session: ClientSession, info: McpToolInfo) -> None:
        self._server = server
        self._session = session
        self._info = info
        self.name = tool_name(server, info.name)
        self.description = info.description or f"{info.name} (MCP server {server})"
        schema: dict[str, Any] = dict(info.inputSchema or {})
        schema.setdefault("type", "object")
        self.parameters: Mapping[str, Any] = schema
        read_only = info.annotations is not None and info.annotations.readOnlyHint is True
        self.kind: ToolKind = "read" if read_only else "other"

    def title(self, arguments: Mapping[str, Any]) -> str:
        label = self._info.title or (
            self._info.annotations.title if self._info.annotations is not None else None
        )
        return f"{label or self._info.name} ({self._server} MCP)"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return ()

    async def run(
        self, arguments: Mapping[str, Any], call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        """Call the tool on its server (its schema is the server's: `parameters`)."""
        from mcp import McpError
        from mcp.types import CancelledNotification, CancelledNotificationParams, ClientNotification

        signal.raise_if_aborted()
        session = self._session
        result: CallToolResult | None = None
        error: str | None = None
        # `send_request` takes the next id synchronously before its first await; the MCP SDK
        # does not send `notifications/cancelled` itself when a request is cancelled.
        request_id = session._request_id
        with signal.linked_scope():
            try:
                result = await session.call_tool(self._info.name, dict(arguments))
            except McpError as exc:
                error = exc.error.message
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                error = f"the MCP server {self._server} is gone"
        if signal.aborted:
            if result is None and error is None:
                notice = ClientNotification(
                    CancelledNotification(
                        params=CancelledNotificationParams(
                            requestId=request_id, reason="the turn was cancelled"
                        )
                    )
                )
                with (
                    anyio.CancelScope(shield=True),
                    anyio.move_on_after(CANCEL_NOTIFY_TIMEOUT),
                    contextlib.suppress(Exception),
                ):
                    await session.send_notification(notice)
            signal.raise_if_aborted()
        if result is None:
            return ToolOutput(text=redact(f"MCP error: {error}"), failed=True)
        return render_result(result)


def render_result(result: CallToolResult) -> ToolOutput:
    """A tool result as text: text content verbatim, the rest described."""
    from mcp import types

    parts: list[str] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            parts.append(item.text)
        elif isinstance(item, types.ImageContent):
            parts.append(f"[image: {item.mimeType}, {len(item.data) * 3 // 4} bytes]")
        elif isinstance(item, types.AudioContent):
            parts.append(f"[audio: {item.mimeType}, {len(item.data) * 3 // 4} bytes]")
        elif isinstance(item, types.ResourceLink):
            what = f" ({item.mimeType})" if item.mimeType else ""
            parts.append(f"[resource link: {item.name} {item.uri}{what}]")
        elif isinstance(item, types.EmbeddedResource):
            resource = item.resource
            if isinstance(resource, types.TextResourceContents):
                parts.append(f"[resource {resource.uri}]\n{resource.text}")
            else:
                parts.append(f"[resource {resource.uri}: binary {resource.mimeType or ''}]")
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent))
    return ToolOutput(text="\n".join(parts), failed=result.isError)


# ------------------------------------------------------------------------ connections


@dataclass
class _Connection:
    config: McpServerConfig
    done: anyio.Event = field(default_factory=anyio.Event)
    """Set once connected (or failed)."""
    stopped: anyio.Event = field(default_factory=anyio.Event)
    pgid: int | None = None
    connected: bool = False
    """Initialized and its tools listed; until then, closing cancels the attempt."""
    attempt: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    """The whole life of the connection (`_serve`)."""


class McpServers:
    """The MCP connections of one session."""

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        cwd: str,
        on_tools: Callable[[Sequence[Tool]], None],
        processes: ProcessRegistry | None = None,
    ) -> None:
        self._processes = processes
        self._connections = [_Connection(s) for s in servers]
        self._cwd = cwd if os.path.isdir(cwd) else None
        self._on_tools = on_tools
        self._closing = anyio.Event()
        self._failures: list[str] = []
        self.tools: list[Tool] = []

    @property
    def pids(self) -> list[int]:
        """Process group ids (= leader pids) of the live stdio servers."""
        return [c.pgid for c in self._connections if c.pgid is not None]

    def start(self, task_group: TaskGroup) -> None:
        """Connect to every server in the background."""
        for connection in self._connections:
            task_group.start_soon(self._serve, connection, name=f"mcp {connection.config.name}")

    async def ready(self, within: float = READY_TIMEOUT) -> None:
        """Wait (at most `within` seconds) for every server to connect or fail."""
        with anyio.move_on_after(within):
            for connection in self._connections:
                await connection.done.wait()
        for connection in self._connections:
            if not connection.done.is_set():
                self._fail(connection, f"did not connect within {within:g}s; still trying")
                connection.done.set()

    def take_failures(self) -> list[str]:
        """Failures not yet reported (each is returned once)."""
        failures, self._failures = self._failures, []
        return failures

    async def aclose(self) -> None:
        """Close every connection and stop every stdio server's process group."""
        self._closing.set()
        for connection in self._connections:
            # A server still starting is not waited for: closing would otherwise last until
            # its connect timeout (30 s) ran out, and the session's close with it.
            if not connection.connected:
                connection.attempt.cancel()
        with anyio.CancelScope(shield=True):
            for connection in self._connections:
                await connection.stopped.wait()

    # -- internals -------------------------------------------------------------------

    def _fail(self, connection: _Connection, why: str) -> None:
        message = f"MCP server {connection.config.name!r} is unavailable: {why}"
        log.warning("%s", message)
        self._failures.append(message)

    async def _serve(self, connection: _Connection) -> None:
        from mcp import ClientSession

        with connection.attempt:
            try:
                if self._closing.is_set():
                    return
                async with contextlib.AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(self._transport(connection))
                    session = await stack.enter_async_context(ClientSession(read, write))
                    with anyio.fail_after(CONNECT_TIMEOUT):
                        await session.initialize()
                        infos: list[McpToolInfo] = []
                        cursor: str | None = None
                        while True:
                            page = await session.list_tools(cursor)
                            infos.extend(page.tools)
                            cursor = page.nextCursor
                            if not cursor:
                                break
                    name = connection.config.name
                    tools: list[Tool] = [McpTool(name, session, info) for info in infos]
                    self.tools.extend(tools)
                    self._on_tools(tools)
                    log.info("MCP server %s connected: %d tools", name, len(tools))
                    connection.connected = True
                    connection.done.set()
                    await self._closing.wait()
            except Exception as exc:
                if not connection.done.is_set():
                    self._fail(connection, _describe(exc))
                else:
                    log.warning("MCP server %s failed: %s", connection.config.name, _describe(exc))
            finally:
                connection.done.set()
                connection.stopped.set()

    @asynccontextmanager
    async def _transport(
        self, connection: _Connection
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
    ]:
        config = connection.config
        if config.transport == "stdio":
            async with self._stdio(connection) as streams:
                yield streams
            return
        headers, url = dict(config.headers), config.url
        if config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            async with (
                create_mcp_http_client(headers=headers) as client,
                streamable_http_client(url, http_client=client) as (read, write, _),
            ):
                yield read, write
        elif config.transport == "sse":
            from mcp.client.sse import sse_client

            async with sse_client(url, headers=headers) as (read, write):
                yield read, write
        else:
            raise ValueError(f"unsupported MCP transport {config.transport!r}")

    @asynccontextmanager
    async def _stdio(
        self, connection: _Connection
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
    ]:
        from mcp.client.stdio import get_default_environment

        config = connection.config
        env = get_default_environment()
        env.update(config.env)
        async with spawn(
            [config.command, *config.args],
            registry=self._processes,
            cwd=self._cwd,
            env=env,
            stdin=PIPE,
            stderr=None,  # the server's log is our stderr's business, never fd 1
            grace=STOP_GRACE,
        ) as child:
            process = child.process
            connection.pgid = process.pid
            try:
                async with _line_streams(process, config.name) as streams:
                    yield streams
            finally:
                # Closing stdin is the MCP way to ask a stdio server to exit; `spawn` then
                # stops and joins whatever is left of its tree.
                with anyio.CancelScope(shield=True):
                    with contextlib.suppress(Exception):
                        if process.stdin is not None:
                            await process.stdin.aclose()
                    with anyio.move_on_after(STOP_GRACE):
                        await process.wait()
                connection.pgid = None


@asynccontextmanager
async def _line_streams(
    process: Process, name: str
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
]:
    """The MCP stdio transport over a process's pipes: one JSON-RPC message per line."""
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCMessage

    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    assert process.stdout is not None and process.stdin is not None
    stdout, stdin = process.stdout, process.stdin

    async def reader() -> None:
        buffer = b""
        async with read_send:
            with contextlib.suppress(
                anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream
            ):
                async for chunk in stdout:
                    buffer += chunk
                    while b"\n" in buffer:
                        line, buffer = buffer.split(b"\n", 1)
                        if not line.strip():
                            continue
                        item: SessionMessage | Exception
                        try:
                            item = SessionMessage(JSONRPCMessage.model_validate_json(line))
                        except ValueError as exc:
                            log.warning("MCP server %s wrote a bad line: %s", name, exc)
                            item = exc
                        await read_send.send(item)

    async def writer() -> None:
        async with write_recv:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for message in write_recv:
                    data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await stdin.send(data.encode() + b"\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_recv, write_send
        finally:
            tg.cancel_scope.cancel()
            await write_send.aclose()
            await read_recv.aclose()


def _describe(exc: BaseException) -> str:
    """A short reason for a failure (the first leaf of an exception group), redacted: an
    HTTP client's error names the URL, with its `?token=` or password."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return f"no answer within {CONNECT_TIMEOUT:g}s"
    if isinstance(exc, FileNotFoundError):
        return redact(f"command not found: {exc.filename or exc}")
    return redact(f"{type(exc).__name__}: {exc}")


__all__ = ["McpServerConfig", "McpServers", "McpTool", "render_result", "tool_name"]
