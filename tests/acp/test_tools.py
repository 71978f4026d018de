"""Tools, permissions and modes through the real `acp-server` process and the official SDK
client: the process runner under cancel, permission answers, each mode, the client's fs and
terminals vs the local machine, diff and plan updates, path escapes, and replay after load.

Models are scripted (`--model script:PATH`): a `tool_call` event makes the loop run the tool
and ask the model again, which takes the script's next response.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
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

from tests.support.agent_process import SERVER, FrameLog, RecordingClient, running_agent

pytestmark = [
    pytest.mark.anyio,
    # Process groups, the subreaper and /proc: the runner's guarantees are Linux ones.
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

SANDBOXED = {"ACP_SERVER_SANDBOXED": "1"}
FS = FileSystemCapabilities(read_text_file=True, write_text_file=True)
FS_AND_TERMINAL = ClientCapabilities(fs=FS, terminal=True)
DONE = [{"text": "done"}]
WAIT_S = 10.0


def call(name: str, **arguments: Any) -> list[dict[str, Any]]:
    """A scripted model response that is one tool call."""
    return [{"tool_call": {"name": name, "arguments": arguments}}]


def script(tmp_path: Path, *responses: list[dict[str, Any]]) -> str:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"responses": list(responses)}))
    return f"script:{path}"


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


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The session's workspace (its cwd), resolved: paths on the wire are absolute."""
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))


@pytest.fixture
def not_sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACP_SERVER_SANDBOXED", raising=False)


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


def read_pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


async def wait_for_lines(path: Path, count: int) -> list[int]:
    """The pids in `path` once it holds `count` of them."""
    with anyio.fail_after(WAIT_S):
        while True:
            pids = read_pids(path)
            if len(pids) >= count:
                return pids
            await anyio.sleep(0.01)


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass
        living.append(pid)
    return living


@pytest.mark.parametrize(
    ("trap", "lines"),
    [("", 3), ("trap '' TERM; ", 2)],
    ids=["respects-sigterm", "traps-sigterm"],
)
async def test_cancel_reaps_the_whole_bash_process_tree_before_answering(
    tmp_path: Path, ws: Path, trap: str, lines: int
) -> None:
    pidfile = tmp_path / "pids"
    background = f"sleep 300 & echo $! >> {pidfile}; "
    command = f"{trap}echo $$ >> {pidfile}; {background * (lines - 1)}wait"
    spec = script(tmp_path, call("bash", command=command), DONE)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:
        pids: list[int] = []
        cancelled_at: list[float] = []

        async def cancel_once_running() -> None:
            pids.extend(await wait_for_lines(pidfile, lines))
            assert alive(pids) == pids
            cancelled_at.append(time.monotonic())
            await s.conn.cancel(session_id=s.sid)

        stop, (survivors, elapsed) = await prompt_and_then(
            s,
            cancel_once_running,
            lambda: (alive(pids), time.monotonic() - cancelled_at[0]),
        )
        assert stop == "cancelled"
        assert survivors == []  # the group was reaped before the prompt was answered
        assert [status for _, status, _ in s.client.finished()] == ["failed"]
        assert s.client.permission_requests == []
        if trap:
            assert elapsed >= 1.5  # SIGTERM ignored: SIGKILL after the 2 s grace period
        # The session lives on: the next prompt takes the script's next response.
        assert await s.prompt() == "end_turn"


async def test_a_bash_timeout_reaps_the_tree_and_reports_it(tmp_path: Path, ws: Path) -> None:
    pidfile = tmp_path / "pids"
    command = f"echo $$ >> {pidfile}; sleep 300 & echo $! >> {pidfile}; wait"
    spec = script(tmp_path, call("bash", command=command, timeout_ms=500), DONE)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:
        assert await s.prompt() == "end_turn"
        assert alive(await wait_for_lines(pidfile, 2)) == []
    [(_, status, text)] = s.client.finished()
    assert status == "failed"
    assert "[timed out after 0.5 s; the command was killed]" in text


# --------------------------------------------------------------------------- permissions


async def test_allow_once_runs_the_tool_after_asking_with_four_options(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient(["allow_once"])) as s:
        assert await s.prompt() == "end_turn"
    (tool_call, options), *more = s.client.permission_requests
    assert more == []
    [announced] = s.client.kinds("tool_call")
    assert tool_call.tool_call_id == announced.tool_call_id
    assert (announced.kind, announced.status, announced.raw_input) == (
        "edit",
        "pending",
        {"path": "a.txt", "content": "hi"},
    )
    assert [loc.path for loc in announced.locations] == [str(ws / "a.txt")]
    assert [o.kind for o in options] == [
        "reject_once",
        "allow_once",
        "allow_always",
        "reject_always",
    ]
    assert s.client.finished() == [("Write a.txt", "completed", f"Created {ws}/a.txt (1 line)")]
    statuses = [u.status for u in s.client.kinds("tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    assert (ws / "a.txt").read_text() == "hi"


@pytest.mark.parametrize("answer", ["reject_once", "cancelled"])
async def test_reject_or_cancelled_answer_refuses_the_tool_and_the_turn_goes_on(
    tmp_path: Path, ws: Path, answer: str
) -> None:
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient([answer])) as s:
        assert await s.prompt() == "end_turn"
    assert len(s.client.permission_requests) == 1
    [(title, status, text)] = s.client.finished()
    assert (title, status) == ("Write a.txt", "failed")
    assert text.startswith("denied:")
    assert "in_progress" not in [u.status for u in s.client.kinds("tool_call_update")]
    assert not (ws / "a.txt").exists()
    # The model was asked again with the refusal and answered.
    assert [u.content.text for u in s.client.kinds("agent_message_chunk")] == ["done"]


@pytest.mark.parametrize(
    ("answer", "status"), [("allow_always", "completed"), ("reject_always", "failed")]
)
async def test_always_answers_hold_for_later_prompts_and_after_a_reload(
    tmp_path: Path, ws: Path, answer: str, status: str
) -> None:
    data = tmp_path / "data"
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient([answer]), data_dir=data) as s:
        assert await s.prompt() == "end_turn"
        assert await s.prompt() == "end_turn"
        sid = s.sid
    assert len(s.client.permission_requests) == 1
    assert [st for _, st, _ in s.client.finished()] == [status, status]
    assert (ws / "a.txt").exists() == (status == "completed")

    async with agent_session(ws, spec, data_dir=data, load=sid) as again:
        before = len(again.client.finished())
        assert await again.prompt() == "end_turn"
    assert again.client.permission_requests == []  # persisted with the session
    assert [st for _, st, _ in again.client.finished()[before:]] == [status]


async def test_always_allow_is_per_tool_kind(tmp_path: Path, ws: Path) -> None:
    spec = script(
        tmp_path,
        call("write_file", path="a.txt", content="1"),
        call("write_file", path="b.txt", content="2"),
        call("bash", command="echo ran"),
        DONE,
    )
    client = ToolClient(["allow_always", "reject_once"])
    async with agent_session(ws, spec, client=client) as s:
        assert await s.prompt() == "end_turn"
    # The second edit ran without asking; the command (another kind) was asked about.
    assert s.client.asked_titles == ["Write a.txt", "Run `echo ran`"]
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed", "failed"]


async def test_cancel_while_a_permission_request_is_pending_cancels_that_request(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec, client=ToolClient(hold_permission=True)) as s:

        async def cancel_when_asked() -> None:
            with anyio.fail_after(WAIT_S):
                await s.client.asked.wait()
            await s.conn.cancel(session_id=s.sid)

        stop, _ = await prompt_and_then(s, cancel_when_asked)
    assert stop == "cancelled"
    asked = next(f for f in s.frames.received if f.get("method") == "session/request_permission")
    assert cancel_requests(s.frames) == [asked["id"]]
    assert not (ws / "a.txt").exists()


def cancel_requests(frames: FrameLog) -> list[Any]:
    return [
        f["params"]["requestId"] for f in frames.received if f.get("method") == "$/cancel_request"
    ]


# --------------------------------------------------------------------------- modes

WRITE_AND_RUN = (
    call("write_file", path="a.txt", content="hi"),
    call("bash", command="echo ran > b.txt"),
    DONE,
)


async def test_default_mode_asks_before_edits_and_commands(tmp_path: Path, ws: Path) -> None:
    client = ToolClient(["allow_once", "allow_once"])
    async with agent_session(ws, script(tmp_path, *WRITE_AND_RUN), client=client) as s:
        assert s.new.modes is not None and s.new.modes.current_mode_id == "default"
        assert await s.prompt() == "end_turn"
    assert s.client.asked_titles == ["Write a.txt", "Run `echo ran > b.txt`"]
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed"]
    assert (ws / "b.txt").read_text() == "ran\n"


async def test_accept_edits_writes_without_asking_but_asks_before_commands(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, *WRITE_AND_RUN)
    async with agent_session(ws, spec, "--mode", "accept_edits", client=ToolClient()) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.asked_titles == ["Run `echo ran > b.txt`"]  # answered reject_once
    assert [st for _, st, _ in s.client.finished()] == ["completed", "failed"]
    assert (ws / "a.txt").read_text() == "hi"
    assert not (ws / "b.txt").exists()


async def test_read_only_refuses_edits_and_commands_without_asking_but_reads(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "notes.txt").write_text("keep me")
    spec = script(tmp_path, *WRITE_AND_RUN[:2], call("read_file", path="notes.txt"), DONE)
    async with agent_session(ws, spec, "--mode", "read_only") as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    finished = s.client.finished()
    assert [(title, st) for title, st, _ in finished] == [
        ("Write a.txt", "failed"),
        ("Run `echo ran > b.txt`", "failed"),
        ("Read notes.txt", "completed"),
    ]
    assert all("read-only" in text for _, _, text in finished[:2])
    assert finished[2][2] == "keep me"
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()


async def test_bypass_runs_edits_and_commands_without_asking(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, *WRITE_AND_RUN)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:
        assert s.new.modes is not None and s.new.modes.current_mode_id == "bypass"
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed"]
    assert (ws / "a.txt").read_text() == "hi" and (ws / "b.txt").read_text() == "ran\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="bypass is refused only to root")
@pytest.mark.usefixtures("not_sandboxed")
async def test_bypass_is_refused_to_root_without_the_sandbox_variable(
    tmp_path: Path, ws: Path
) -> None:
    async with agent_session(ws, script(tmp_path, DONE)) as s:
        with pytest.raises(RequestError) as by_mode:
            await s.conn.set_session_mode(session_id=s.sid, mode_id="bypass")
        with pytest.raises(RequestError) as by_option:
            await s.conn.set_config_option(config_id="mode", session_id=s.sid, value="bypass")
        assert await s.prompt("/mode bypass") == "end_turn"
    for caught in (by_mode, by_option):
        assert caught.value.code == -32602
        assert "root" in str(caught.value.data) and "ACP_SERVER_SANDBOXED" in str(caught.value.data)
    assert s.client.kinds("current_mode_update") == []
    [answer] = s.client.kinds("agent_message_chunk")
    assert answer.content.text.startswith("The mode was not changed") and "root" in (
        answer.content.text
    )
    # Nor from the command line.
    with anyio.fail_after(30):
        refused = await anyio.run_process(
            [SERVER, "--model", "echo", "--mode", "bypass"], input=b"", check=False
        )
    assert refused.returncode == 2 and b"ACP_SERVER_SANDBOXED" in refused.stderr


def mode_option(options: Any) -> tuple[str, list[str]]:
    """The `mode` config option's current value and choices."""
    [option] = [o for o in options if o.id == "mode"]
    assert option.category == "mode"
    return option.current_value, [choice.value for choice in option.options]


def wire_mode(update: dict[str, Any]) -> str:
    """The mode a `current_mode_update` or `config_option_update` payload announces."""
    if "currentModeId" in update:
        return str(update["currentModeId"])
    [option] = [o for o in update["configOptions"] if o["id"] == "mode"]
    return str(option["currentValue"])


async def test_set_mode_and_set_config_option_announce_the_mode_both_ways(
    tmp_path: Path, ws: Path
) -> None:
    async with agent_session(ws, script(tmp_path, DONE)) as s:
        modes = s.new.modes
        assert modes is not None and modes.current_mode_id == "default"
        ids = ["default", "accept_edits", "read_only", "bypass"]
        assert [m.id for m in modes.available_modes] == ids
        assert mode_option(s.new.config_options) == ("default", ids)

        await s.conn.set_session_mode(session_id=s.sid, mode_id="read_only")
        answer = await s.conn.set_config_option(
            config_id="mode", session_id=s.sid, value="accept_edits"
        )
        assert mode_option(answer.config_options) == ("accept_edits", ids)
        with pytest.raises(RequestError) as unknown:
            await s.conn.set_session_mode(session_id=s.sid, mode_id="yolo")
    assert unknown.value.code == -32602
    shown = [
        (u["sessionUpdate"], wire_mode(u))
        for u in s.wire_updates("current_mode_update") + s.wire_updates("config_option_update")
    ]
    assert sorted(shown) == sorted(
        [
            ("current_mode_update", "read_only"),
            ("current_mode_update", "accept_edits"),
            ("config_option_update", "read_only"),
            ("config_option_update", "accept_edits"),
        ]
    )
    order = [
        u.session_update
        for _, u in s.client.updates
        if u.session_update in ("current_mode_update", "config_option_update")
    ]
    assert order == ["current_mode_update", "config_option_update"] * 2


async def test_mode_slash_command_switches_without_calling_the_model(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("write_file", path="a.txt", content="hi"), DONE)
    async with agent_session(ws, spec) as s:
        assert await s.prompt("/mode read_only") == "end_turn"
        assert s.client.kinds("tool_call") == []  # the model was not asked
        assert [u.current_mode_id for u in s.client.kinds("current_mode_update")] == ["read_only"]
        assert [u.content.text for u in s.client.kinds("agent_message_chunk")] == [
            "Mode set to read_only."
        ]
        assert await s.prompt() == "end_turn"  # the script's first response: write_file
    [commands] = s.client.kinds("available_commands_update")
    assert "mode" in [c.name for c in commands.available_commands]
    assert s.client.permission_requests == []
    assert [(title, st) for title, st, _ in s.client.finished()] == [("Write a.txt", "failed")]
    assert not (ws / "a.txt").exists()


# --------------------------------------------------------------------------- fs and terminals


async def test_file_tools_go_through_the_client_fs_when_it_offers_it(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "a.txt").write_text("on disk")
    buffers = {str(ws / "a.txt"): "unsaved buffer"}
    spec = script(
        tmp_path,
        call("read_file", path="a.txt"),
        call("write_file", path="b.txt", content="new"),
        DONE,
    )
    caps = ClientCapabilities(fs=FS)
    client = ToolClient(buffers=buffers)
    async with agent_session(ws, spec, "--mode", "accept_edits", client=client, caps=caps) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.calls == [
        ("fs/read_text_file", str(ws / "a.txt")),
        ("fs/write_text_file", str(ws / "b.txt")),  # new on disk: no read for a diff
    ]
    finished = s.client.finished()
    assert [(title, st) for title, st, _ in finished] == [
        ("Read a.txt", "completed"),
        ("Write b.txt", "completed"),
    ]
    assert finished[0][2] == "unsaved buffer"  # what the model got back
    assert s.client.buffers[str(ws / "b.txt")] == "new"
    assert (ws / "a.txt").read_text() == "on disk"
    assert not (ws / "b.txt").exists()


async def test_file_tools_use_the_local_disk_without_fs_capabilities(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "a.txt").write_text("on disk")
    spec = script(
        tmp_path,
        call("read_file", path="a.txt"),
        call("write_file", path="b.txt", content="new"),
        DONE,
    )
    client = ToolClient(buffers={str(ws / "a.txt"): "unsaved buffer"})
    async with agent_session(ws, spec, "--mode", "accept_edits", client=client) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.calls == []
    [(_, _, read), _] = s.client.finished()
    assert read == "on disk"
    assert (ws / "b.txt").read_text() == "new"


async def test_bash_runs_in_a_client_terminal_when_it_offers_one(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, call("bash", command="echo hello from $PWD"), DONE)
    client = ToolClient()
    async with agent_session(
        ws, spec, "--mode", "bypass", client=client, caps=FS_AND_TERMINAL, env=SANDBOXED
    ) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.calls == [
        ("terminal/create", "term_1"),
        ("terminal/wait_for_exit", "term_1"),
        ("terminal/output", "term_1"),
        ("terminal/release", "term_1"),
    ]
    created = next(f for f in s.frames.received if f.get("method") == "terminal/create")
    assert created["params"]["cwd"] == str(ws)
    [done] = [u for u in s.wire_updates("tool_call_update") if u["status"] == "completed"]
    assert {"type": "terminal", "terminalId": "term_1"} in done["content"]
    [(_, _, text)] = s.client.finished()
    assert f"hello from {ws}" in text and "[exit code: 0]" in text


async def test_a_failing_terminal_wait_still_releases_the_terminal(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("bash", command="sleep 300"), DONE)
    client = ToolClient(fail_wait=True)
    async with agent_session(
        ws, spec, "--mode", "bypass", client=client, caps=FS_AND_TERMINAL, env=SANDBOXED
    ) as s:
        assert await s.prompt() == "end_turn"
    methods = [method for method, _ in s.client.calls]
    assert methods[:2] == ["terminal/create", "terminal/wait_for_exit"]
    assert methods[-1] == "terminal/release"
    assert [st for _, st, _ in s.client.finished()] == ["failed"]
    assert s.client.spawned[0].returncode is not None  # released terminals are killed


async def test_cancel_during_a_terminal_wait_cancels_the_request_kills_and_releases(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, call("bash", command="sleep 300"), DONE)
    client = ToolClient()
    async with agent_session(
        ws, spec, "--mode", "bypass", client=client, caps=FS_AND_TERMINAL, env=SANDBOXED
    ) as s:

        async def cancel_while_waiting() -> None:
            with anyio.fail_after(WAIT_S):
                await s.client.waiting.wait()
            await s.conn.cancel(session_id=s.sid)

        stop, calls = await prompt_and_then(s, cancel_while_waiting, lambda: list(client.calls))
    assert stop == "cancelled"
    assert calls == [
        ("terminal/create", "term_1"),
        ("terminal/wait_for_exit", "term_1"),
        ("terminal/kill", "term_1"),
        ("terminal/output", "term_1"),
        ("terminal/release", "term_1"),
    ]
    waited = next(f for f in s.frames.received if f.get("method") == "terminal/wait_for_exit")
    assert cancel_requests(s.frames) == [waited["id"]]
    assert s.client.spawned[0].returncode == -signal.SIGKILL
    assert [st for _, st, _ in s.client.finished()] == ["failed"]


# --------------------------------------------------------------------------- diffs and plans


async def test_write_and_edit_carry_diff_content(tmp_path: Path, ws: Path) -> None:
    spec = script(
        tmp_path,
        call("write_file", path="a.txt", content="one\ntwo\n"),
        call("edit_file", path="a.txt", old_text="two", new_text="three"),
        call("write_file", path="a.txt", content="four\n"),
        DONE,
    )
    async with agent_session(ws, spec, "--mode", "accept_edits") as s:
        assert await s.prompt() == "end_turn"
    path = str(ws / "a.txt")
    diffs = [
        [c for c in u["content"] if c["type"] == "diff"]
        for u in s.wire_updates("tool_call_update")
        if u["status"] == "completed"
    ]
    assert [[(d["path"], d.get("oldText"), d["newText"]) for d in ds] for ds in diffs] == [
        [(path, None, "one\ntwo\n")],
        [(path, "one\ntwo\n", "one\nthree\n")],
        [(path, "one\nthree\n", "four\n")],
    ]
    assert (ws / "a.txt").read_text() == "four\n"


PLAN = [
    {"content": "read the code", "status": "completed", "priority": "high"},
    {"content": "fix the bug", "status": "in_progress"},
    {"content": "write a test", "priority": "low"},
]
PLAN_SHOWN = [
    {"content": "read the code", "priority": "high", "status": "completed"},
    {"content": "fix the bug", "priority": "medium", "status": "in_progress"},
    {"content": "write a test", "priority": "low", "status": "pending"},
]


async def test_todo_write_sends_a_plan_update_with_its_entries(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, call("todo_write", entries=PLAN), DONE)
    async with agent_session(ws, spec, "--mode", "read_only") as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    [plan] = s.wire_updates("plan")
    assert plan["entries"] == PLAN_SHOWN
    [(title, status, text)] = s.client.finished()
    assert (title, status) == ("Update plan", "completed")
    assert text.startswith("Plan updated: 3 entries")


# --------------------------------------------------------------------------- path escapes


@pytest.mark.parametrize("escape", ["dotdot", "absolute", "symlink"])
async def test_path_escapes_are_refused_naming_the_workspace_roots(
    tmp_path: Path, ws: Path, escape: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text("untouched")
    (ws / "link").symlink_to(outside)
    path = {
        "dotdot": "../outside/target.txt",
        "absolute": str(outside / "target.txt"),
        "symlink": "link/target.txt",
    }[escape]
    spec = script(tmp_path, call("write_file", path=path, content="escaped"), DONE)
    async with agent_session(ws, spec, "--mode", "accept_edits") as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    [(_, status, text)] = s.client.finished()
    assert status == "failed"
    assert "outside the workspace" in text and str(ws) in text
    assert (outside / "target.txt").read_text() == "untouched"


@pytest.mark.parametrize(
    ("answer", "status"), [("reject_once", "failed"), ("allow_once", "completed")]
)
async def test_default_mode_asks_before_reading_outside_the_workspace(
    tmp_path: Path, ws: Path, answer: str, status: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    spec = script(tmp_path, call("read_file", path=str(secret)), DONE)
    async with agent_session(ws, spec, client=ToolClient([answer])) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.asked_titles == [f"Read {secret} (outside the workspace)"]
    [(_, got, text)] = s.client.finished()
    assert got == status
    assert ("secret" in text) == (status == "completed")


async def test_reading_inside_the_workspace_never_asks(tmp_path: Path, ws: Path) -> None:
    (ws / "a.txt").write_text("inside")
    spec = script(tmp_path, call("read_file", path="a.txt"), call("list_dir"), DONE)
    async with agent_session(ws, spec) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    assert [st for _, st, _ in s.client.finished()] == ["completed", "completed"]


# --------------------------------------------------------------------------- replay


async def test_load_replays_diffs_the_plan_and_the_mode(tmp_path: Path, ws: Path) -> None:
    data = tmp_path / "data"
    spec = script(
        tmp_path,
        call("write_file", path="a.txt", content="one\n"),
        call("edit_file", path="a.txt", old_text="one", new_text="two"),
        call("todo_write", entries=PLAN),
        DONE,
    )
    async with agent_session(ws, spec, data_dir=data) as s:
        await s.conn.set_session_mode(session_id=s.sid, mode_id="accept_edits")
        assert await s.prompt() == "end_turn"
        live_diffs = [
            c
            for u in s.wire_updates("tool_call_update")
            for c in u.get("content", [])
            if c["type"] == "diff"
        ]
    async with agent_session(ws, spec, data_dir=data, load=s.sid) as loaded:
        assert loaded.new.modes.current_mode_id == "accept_edits"
        assert mode_option(loaded.new.config_options)[0] == "accept_edits"
        replayed_diffs = [
            c
            for u in loaded.wire_updates("tool_call_update")
            for c in u.get("content", [])
            if c["type"] == "diff"
        ]
        assert [u["currentModeId"] for u in loaded.wire_updates("current_mode_update")] == [
            "accept_edits"
        ]
        assert [p["entries"] for p in loaded.wire_updates("plan")] == [PLAN_SHOWN]
        # Still accept_edits after the load: the next edit runs without asking.
        assert await loaded.prompt() == "end_turn"
    path = str(ws / "a.txt")
    assert [(d["path"], d.get("oldText"), d["newText"]) for d in replayed_diffs] == [
        (path, None, "one\n"),
        (path, "one\n", "two\n"),
    ]
    assert replayed_diffs == live_diffs
    assert loaded.client.permission_requests == []
