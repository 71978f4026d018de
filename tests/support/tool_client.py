"""The ACP client for tool tests against the real `acp-server`: permission answers from a
queue, `fs/*` from in-memory buffers, `terminal/*` as real local processes; and a session of
the agent with it, on a scripted model.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from acp import RequestError, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    KillTerminalResponse,
    NewSessionResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.support.agent_process import FrameLog, RecordingClient, running_agent

SANDBOXED = {"ACP_SERVER_SANDBOXED": "1"}
FS = FileSystemCapabilities(read_text_file=True, write_text_file=True)
FS_AND_TERMINAL = ClientCapabilities(fs=FS, terminal=True)
DONE = [{"text": "done"}]


def call(name: str, **arguments: Any) -> list[dict[str, Any]]:
    """A scripted model response that is one tool call."""
    return [{"tool_call": {"name": name, "arguments": arguments}}]


# --------------------------------------------------------------------------- the SDK client

Answer = str  # a permission option kind, or "cancelled"


@dataclass
class FakeTerminal:
    process: asyncio.subprocess.Process
    reader: asyncio.Task[None]
    output: bytearray = field(default_factory=bytearray)

    def exit_status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exit_code": None, "signal": signal.Signals(-code).name}
        return {"exit_code": code, "signal": None}


class ToolClient(RecordingClient):
    """An ACP client for tool calls: answers permission requests from a queue, serves
    `fs/*` from in-memory buffers, and runs `terminal/*` commands as real local processes.
    Every request is recorded in `calls` as (method, detail), in arrival order."""

    def __init__(
        self,
        answers: list[Answer] | None = None,
        buffers: dict[str, str] | None = None,
        *,
        hold_permission: bool = False,
        fail_wait: bool = False,
    ) -> None:
        super().__init__()
        self.answers = list(answers or [])
        self.buffers = dict(buffers or {})
        self.hold_permission = hold_permission
        self.fail_wait = fail_wait
        self.permission_requests: list[tuple[Any, list[PermissionOption]]] = []
        self.calls: list[tuple[str, str]] = []
        self.terminals: dict[str, FakeTerminal] = {}
        self.spawned: list[asyncio.subprocess.Process] = []
        self.asked = anyio.Event()
        self.waiting = anyio.Event()

    # -- permissions ----------------------------------------------------------------------

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        self.calls.append(("session/request_permission", tool_call.tool_call_id))
        self.asked.set()
        if self.hold_permission:
            await anyio.sleep_forever()
        answer = self.answers.pop(0) if self.answers else "reject_once"
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        option = next(o for o in options if o.kind == answer)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=option.option_id, outcome="selected")
        )

    @property
    def asked_titles(self) -> list[str]:
        return [tool_call.title for tool_call, _ in self.permission_requests]

    # -- fs -------------------------------------------------------------------------------

    async def read_text_file(
        self,
        path: str,
        session_id: str,
        limit: int | None = None,
        line: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.calls.append(("fs/read_text_file", path))
        if path not in self.buffers:
            raise RequestError(-32002, "Resource not found", {"path": path})
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.calls.append(("fs/write_text_file", path))
        self.buffers[path] = content
        return WriteTextFileResponse()

    # -- terminals ------------------------------------------------------------------------

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: Any = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.spawned.append(process)
        terminal_id = f"term_{len(self.spawned)}"
        output = bytearray()

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                output.extend(chunk)

        reader = asyncio.get_running_loop().create_task(read())
        self.terminals[terminal_id] = FakeTerminal(process, reader, output)
        self.calls.append(("terminal/create", terminal_id))
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(("terminal/wait_for_exit", terminal_id))
        self.waiting.set()
        if self.fail_wait:
            raise RequestError.internal_error({"details": "the terminal went away"})
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        return WaitForTerminalExitResponse(**terminal.exit_status())  # type: ignore[arg-type]

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.calls.append(("terminal/output", terminal_id))
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is not None:
            await terminal.reader
        status = terminal.exit_status()
        return TerminalOutputResponse(
            output=terminal.output.decode(errors="replace"),
            truncated=False,
            exit_status=None if status is None else TerminalExitStatus(**status),
        )

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        self.calls.append(("terminal/kill", terminal_id))
        await self._kill(self.terminals[terminal_id])
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        self.calls.append(("terminal/release", terminal_id))
        await self._kill(self.terminals.pop(terminal_id))
        return ReleaseTerminalResponse()

    @staticmethod
    async def _kill(terminal: FakeTerminal) -> None:
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(terminal.process.pid, signal.SIGKILL)
        await terminal.process.wait()
        await terminal.reader

    def close(self) -> None:
        for process in self.spawned:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)

    # -- what the client was shown --------------------------------------------------------

    def kinds(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def finished(self) -> list[tuple[str, str, str]]:
        """(title, final status, text) of every tool call that ended, in order."""
        titles = {u.tool_call_id: u.title for u in self.kinds("tool_call")}
        ended = []
        for update in self.kinds("tool_call_update"):
            if update.status in ("completed", "failed"):
                text = "".join(c.content.text for c in update.content or [] if c.type == "content")
                ended.append((titles[update.tool_call_id], update.status, text))
        return ended


# --------------------------------------------------------------------------- the agent


@dataclass
class Session:
    conn: Any
    sid: str
    frames: FrameLog
    client: ToolClient
    new: NewSessionResponse

    async def prompt(self, text: str = "go") -> str:
        response = await self.conn.prompt(session_id=self.sid, prompt=[text_block(text)])
        return str(response.stop_reason)

    def wire_updates(self, kind: str) -> list[dict[str, Any]]:
        """The raw `session/update` payloads of this kind, as they were on the wire."""
        return [
            f["params"]["update"]
            for f in self.frames.received
            if f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] == kind
        ]


@asynccontextmanager
async def agent_session(
    ws: Path,
    spec: str,
    *args: str,
    client: ToolClient | None = None,
    caps: ClientCapabilities | None = None,
    env: dict[str, str] | None = None,
    data_dir: Path | None = None,
    load: str | None = None,
) -> AsyncIterator[Session]:
    """`acp-server --model SPEC ARGS` with a fresh session in `ws` (or session `load` loaded)."""
    argv = ["--model", spec, *args]
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    client = client if client is not None else ToolClient()
    try:
        async with running_agent(*argv, client=client, env=env) as (conn, _, frames, _):
            await conn.initialize(protocol_version=1, client_capabilities=caps)
            if load is None:
                new = await conn.new_session(cwd=str(ws), mcp_servers=[])
                sid = new.session_id
            else:
                new = await conn.load_session(session_id=load, cwd=str(ws), mcp_servers=[])
                sid = load
            yield Session(conn, sid, frames, client, new)
    finally:
        client.close()


async def prompt_and_then(
    session: Session, during: Callable[[], Awaitable[None]], after: Callable[[], Any] | None = None
) -> tuple[str, Any]:
    """Send a prompt, run `during` while it runs; return its stop reason and what `after`
    (called the moment the response arrives) returned."""
    result: list[tuple[str, Any]] = []
    async with anyio.create_task_group() as tg:

        async def ask() -> None:
            stop = await session.prompt()
            result.append((stop, after() if after is not None else None))

        tg.start_soon(ask)
        await during()
    return result[0]


# --------------------------------------------------------------------------- process tree


def mode_option(options: Any) -> tuple[str, list[str]]:
    """The `mode` config option's current value and choices."""
    [option] = [o for o in options if o.id == "mode"]
    assert option.category == "mode"
    return option.current_value, [choice.value for choice in option.options]


def cancel_requests(frames: FrameLog) -> list[Any]:
    """The request ids of every `$/cancel_request` the agent sent."""
    return [
        f["params"]["requestId"] for f in frames.received if f.get("method") == "$/cancel_request"
    ]
