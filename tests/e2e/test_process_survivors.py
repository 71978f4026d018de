"""Nothing a tool or a hook started outlives it, through the real `acp-server` process and the
official SDK client: a child that leaves the process group (`setsid`, `setpgid`, a double
fork) dies on `session/cancel`, the bash timeout, `session/close` and stdin EOF; children
that ignore SIGTERM die when the agent is sent SIGTERM, and the agent still exits 0; a hook's
detached child dies with the hook. Survivors are found by their marks in /proc
(tests/support/survivors.py), zombies the agent failed to reap included.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block
from acp.schema import McpServerStdio

from tests.support.agent_process import running_agent
from tests.support.survivors import ESCAPES, Escapee
from tests.support.watchdogs import watchdogs

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="/proc and the subreaper are Linux's"),
]

WAIT_S = 20.0
MCP_START_S = 60.0
"""A hang guard: the agent loads the MCP SDK before it starts a server (over 10 s seen on a
loaded machine)."""
EXIT_S = 30.0
"""A guard against a hung agent, no bound on its speed: the exit within 2 s of SIGTERM is
the agent's own watchdog's promise, and a bound near it would fail when the watchdog works."""
TIMEOUT_MS = 4000
"""The bash timeout in the timeout case: long enough for the escapee to start first."""


@pytest.fixture
def escapee(tmp_path: Path) -> Escapee:
    return Escapee(tmp_path)


def bash_then_done(tmp_path: Path, command: str, **arguments: Any) -> str:
    """A scripted model: one `bash` call, then a text answer."""
    path = tmp_path / "model.json"
    call = {"tool_call": {"name": "bash", "arguments": {"command": command, **arguments}}}
    path.write_text(json.dumps({"responses": [[call], [{"text": "done"}]]}))
    return f"script:{path}"


@asynccontextmanager
async def session(
    tmp_path: Path,
    ws: Path,
    spec: str,
    hooks: dict[str, Any] | None = None,
    mcp_servers: list[McpServerStdio] | None = None,
) -> AsyncIterator[tuple[Any, Any, str]]:
    """(connection, agent process, session id) of `acp-server --model SPEC --mode bypass`,
    with only the given user hooks and MCP servers."""
    config = tmp_path / "config"
    (config / "acp-server").mkdir(parents=True)
    if hooks is not None:
        (config / "acp-server" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    env = {"ACP_SERVER_SANDBOXED": "1", "XDG_CONFIG_HOME": str(config)}
    async with running_agent("--model", spec, "--mode", "bypass", env=env) as (conn, proc, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=mcp_servers or [])).session_id
        yield conn, proc, sid


async def prompt_while(conn: Any, sid: str, during: Callable[[], Awaitable[None]]) -> str:
    """Send a prompt, run `during` while it runs; its stop reason."""
    stops: list[str] = []
    async with anyio.create_task_group() as tg:

        async def ask() -> None:
            response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
            stops.append(str(response.stop_reason))

        tg.start_soon(ask)
        await during()
    return stops[0]


async def started(escapee: Escapee, ready: Path) -> None:
    with anyio.fail_after(WAIT_S):
        while not await anyio.Path(ready).exists():  # noqa: ASYNC110 - another process writes it
            await anyio.sleep(0.01)
    assert escapee.survivors(), "the escapee never started"


@pytest.mark.parametrize("how", ESCAPES)
async def test_cancel_kills_a_child_that_left_the_group(
    tmp_path: Path, ws: Path, escapee: Escapee, how: str
) -> None:
    ready = tmp_path / "ready"
    spec = bash_then_done(tmp_path, f"{escapee.command(how, ready)}; sleep 300")
    async with session(tmp_path, ws, spec) as (conn, agent, sid):

        async def cancel() -> None:
            await started(escapee, ready)
            await conn.cancel(session_id=sid)

        assert await prompt_while(conn, sid, cancel) == "cancelled"
        assert escapee.survivors(unreaped_by=agent.pid) == []


@pytest.mark.parametrize("how", ESCAPES)
async def test_the_bash_timeout_kills_a_child_that_left_the_group(
    tmp_path: Path, ws: Path, escapee: Escapee, how: str
) -> None:
    ready = tmp_path / "ready"
    command = f"{escapee.command(how, ready)}; sleep 300"
    spec = bash_then_done(tmp_path, command, timeout_ms=TIMEOUT_MS)
    async with session(tmp_path, ws, spec) as (conn, agent, sid):
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
        assert ready.exists(), "the timeout fired before the escapee started"
        assert escapee.survivors(unreaped_by=agent.pid) == []


@pytest.mark.parametrize("how", ESCAPES)
async def test_session_close_kills_a_child_that_left_the_group(
    tmp_path: Path, ws: Path, escapee: Escapee, how: str
) -> None:
    ready = tmp_path / "ready"
    spec = bash_then_done(tmp_path, f"{escapee.command(how, ready)}; sleep 300")
    async with session(tmp_path, ws, spec) as (conn, agent, sid):
        survivors: list[int] = []

        async def close() -> None:
            await started(escapee, ready)
            await conn.close_session(session_id=sid)
            survivors.extend(escapee.survivors(unreaped_by=agent.pid))

        await prompt_while(conn, sid, close)
        assert survivors == []


@pytest.mark.parametrize("how", ESCAPES)
async def test_stdin_eof_ends_the_agent_without_a_child_that_left_the_group(
    tmp_path: Path, ws: Path, escapee: Escapee, how: str
) -> None:
    # End of input: the running prompt is answered (its command ends after a second), then
    # the agent exits 0.
    ready = tmp_path / "ready"
    spec = bash_then_done(tmp_path, f"{escapee.command(how, ready)}; sleep 1")
    async with session(tmp_path, ws, spec) as (conn, agent, sid):

        async def end_input() -> None:
            await started(escapee, ready)
            agent.stdin.close()

        assert await prompt_while(conn, sid, end_input) == "end_turn"
        with anyio.fail_after(WAIT_S):
            assert await agent.wait() == 0
    assert escapee.survivors() == []


async def test_sigterm_of_the_agent_kills_children_that_ignore_sigterm(
    tmp_path: Path, ws: Path, escapee: Escapee
) -> None:
    # The shell and the sleep it becomes ignore SIGTERM, and a double-forked child ignoring
    # it too left the group: the agent's SIGKILL must land before it exits.
    ready = tmp_path / "ready"
    command = f"trap '' TERM; {escapee.command('double-fork', ready)}; exec {escapee.path} 300"
    async with session(tmp_path, ws, bash_then_done(tmp_path, command)) as (conn, agent, sid):

        async def terminate() -> None:
            await started(escapee, ready)
            assert escapee.survivors()
            agent.terminate()
            with anyio.fail_after(EXIT_S):
                assert await agent.wait() == 0

        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                # Disposal ends the turn; whether its answer is written before the exit
                # is not what this test is about.
                await conn.prompt(session_id=sid, prompt=[text_block("go")])

            tg.start_soon(ask)
            await terminate()
            tg.cancel_scope.cancel()
    assert escapee.survivors() == []


@pytest.mark.parametrize("how", ESCAPES)
async def test_a_hooks_detached_child_dies_with_the_hook(
    tmp_path: Path, ws: Path, escapee: Escapee, how: str
) -> None:
    ready = tmp_path / "ready"
    hooks = {"prompt_submit": [{"command": escapee.command(how, ready)}]}
    spec = bash_then_done(tmp_path, "true")
    async with session(tmp_path, ws, spec, hooks=hooks) as (conn, agent, sid):
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
        assert ready.exists(), "the hook never started its child"
        assert escapee.survivors(unreaped_by=agent.pid) == []


@pytest.mark.parametrize("what", ["bash", "hook", "mcp-server"])
async def test_sigkill_of_the_agent_leaves_nothing_of_a_running_call(
    tmp_path: Path, ws: Path, escapee: Escapee, what: str
) -> None:
    # A foreground command, a hook and an MCP stdio server, each ignoring SIGTERM with a
    # double-forked child that left its group: nothing of the agent runs after SIGKILL, its
    # watchdog (acp_server/process/watchdog.py) stops them.
    ready = tmp_path / "ready"
    command = (
        f"trap '' TERM; {escapee.command('double-fork', ready)}; "
        f"{escapee.mark} exec {escapee.path} 300"
    )
    spec = bash_then_done(tmp_path, command if what == "bash" else "true")
    hooks = {"prompt_submit": [{"command": command}]} if what == "hook" else None
    servers = [McpServerStdio(name="s", command="sh", args=["-c", command], env=[])]
    mcp_servers = servers if what == "mcp-server" else None
    async with session(tmp_path, ws, spec, hooks, mcp_servers) as (conn, agent, sid):
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                # The agent dies with the prompt unanswered: the connection's end is not
                # what this test is about.
                with contextlib.suppress(Exception):
                    await conn.prompt(session_id=sid, prompt=[text_block("go")])

            if what != "mcp-server":
                tg.start_soon(ask)
            with anyio.fail_after(MCP_START_S):
                while len(escapee.survivors()) < 2:  # noqa: ASYNC110 - /proc
                    await anyio.sleep(0.02)
            agent.kill()
            with anyio.fail_after(EXIT_S):
                await agent.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(WAIT_S):
            while escapee.survivors():  # noqa: ASYNC110 - other processes' fate, from /proc
                await anyio.sleep(0.02)
    assert escapee.survivors() == []


async def test_the_agent_starts_its_watchdog_with_its_first_command(
    tmp_path: Path, ws: Path
) -> None:
    # Not before: `initialize` and `session/new` are answered by an agent without it.
    async with session(tmp_path, ws, bash_then_done(tmp_path, "true")) as (conn, agent, sid):
        assert watchdogs(agent.pid) == []
        response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
        assert len(watchdogs(agent.pid)) == 1
