"""The command sandbox through the real `acp-server` and the official SDK client: in sandboxed
mode `bash` writes in the workspace but not in /etc or the home directory, reaches the host's
127.0.0.1 only with the network on, asks before a command that declares it needs the network,
and a cancelled sandboxed process tree leaves no process behind.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from acp import text_block

from tests.support.agent_process import running_agent
from tests.support.command_sandbox import needs_bwrap
from tests.support.processes import wait_for_pids
from tests.support.scripted_model import script
from tests.support.survivors import Escapee
from tests.support.tool_client import DONE, ToolClient, agent_session, call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux only"),
    needs_bwrap,
]

SANDBOXED_MODE = ("--mode", "sandboxed")


@contextmanager
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP listener on the host's 127.0.0.1: (port, what each accepted connection sent)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                received.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], received
    finally:
        stop.set()
        thread.join()
        server.close()


def connect(port: int) -> str:
    """A shell command that sends `hello` to the host's listener over /dev/tcp."""
    return f"echo hello > /dev/tcp/127.0.0.1/{port} && echo sent"


def network_config(tmp_path: Path, network: bool) -> dict[str, str]:
    """An environment whose config file sets `[sandbox] network`."""
    config = tmp_path / "config"
    (config / "acp-server").mkdir(parents=True)
    (config / "acp-server" / "config.toml").write_text(
        f"[sandbox]\nnetwork = {'true' if network else 'false'}\n"
    )
    return {"XDG_CONFIG_HOME": str(config)}


async def test_a_sandboxed_command_writes_in_the_workspace_but_not_in_etc_or_home(
    tmp_path: Path, ws: Path
) -> None:
    home_file = Path.home() / f"acp-sandbox-test-{os.getpid()}-{ws.parent.name}"
    etc_file = Path("/etc") / home_file.name
    command = f"echo inside > inside.txt; echo out > {etc_file}; echo out > {home_file}"
    spec = script(tmp_path, call("bash", command=command), DONE)
    try:
        async with agent_session(ws, spec, *SANDBOXED_MODE) as s:
            assert await s.prompt() == "end_turn"
        assert s.client.permission_requests == []  # sandboxed mode runs it without asking
        [(_, status, text)] = s.client.finished()
        assert (ws / "inside.txt").read_text() == "inside\n"
        assert not etc_file.exists() and not home_file.exists()
        assert status == "failed"
        assert text.count("Read-only file system") == 2
        # Honest reporting: the result says the sandbox refused it, and how to ask for more.
        assert "the sandbox refused a write outside the writable directories" in text
        assert 'needs: ["write_outside"]' in text
    finally:
        for leftover in (etc_file, home_file):
            leftover.unlink(missing_ok=True)


@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_the_hosts_loopback_is_reached_only_with_the_network_on(
    tmp_path: Path, ws: Path, network: bool
) -> None:
    with listener() as (port, received):
        spec = script(tmp_path, call("bash", command=connect(port)), DONE)
        env = network_config(tmp_path, network)
        async with agent_session(ws, spec, *SANDBOXED_MODE, env=env) as s:
            assert await s.prompt() == "end_turn"
        [(_, status, text)] = s.client.finished()
    assert s.client.permission_requests == []
    if network:
        assert status == "completed" and "sent" in text
        assert received == [b"hello\n"]
    else:
        assert status == "failed" and received == []
        assert "the sandbox has no network" in text and 'needs: ["network"]' in text


async def test_a_command_that_needs_the_network_asks_first_and_then_reaches_it(
    tmp_path: Path, ws: Path
) -> None:
    with listener() as (port, received):
        needs_network = call("bash", command=connect(port), needs=["network"])
        spec = script(tmp_path, needs_network, needs_network, DONE)
        client = ToolClient(["reject_once", "allow_once"])
        async with agent_session(ws, spec, *SANDBOXED_MODE, client=client) as s:
            assert await s.prompt() == "end_turn"
        finished = s.client.finished()
    title = (
        f"Run `{connect(port)}` (sandboxed, with the host's network: what the host reaches, "
        "including its abstract Unix sockets such as X11 and D-Bus)"
    )
    assert s.client.asked_titles == [title, title]
    assert [status for _, status, _ in finished] == ["failed", "completed"]
    assert received == [b"hello\n"]


async def test_writing_outside_is_asked_about_and_runs_unsandboxed_once_allowed(
    tmp_path: Path, ws: Path
) -> None:
    outside = tmp_path / "outside.txt"
    command = f"echo out > {outside}"
    spec = script(tmp_path, call("bash", command=command, needs=["write_outside"]), DONE)
    client = ToolClient(["allow_once"])
    async with agent_session(ws, spec, *SANDBOXED_MODE, client=client) as s:
        assert await s.prompt() == "end_turn"
    [title] = s.client.asked_titles
    assert title.endswith("` (not sandboxed: it asks to write outside the workspace)")
    assert outside.read_text() == "out\n"


async def test_other_modes_say_the_command_runs_unsandboxed(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, call("bash", command="echo hi"), DONE)
    async with agent_session(ws, spec, "--mode", "accept_edits") as s:
        assert await s.prompt() == "end_turn"
    assert s.client.asked_titles == ["Run `echo hi` (not sandboxed)"]


async def test_cancelling_a_sandboxed_sleep_tree_leaves_no_survivor(
    tmp_path: Path, ws: Path
) -> None:
    # The escapee lives in the workspace: the sandbox's /tmp is its own.
    escapee = Escapee(ws)
    pidfile = ws / "pids"
    ready = ws / "ready"
    command = (
        f"export {escapee.mark}; sleep 300 & sleep 300 & {escapee.command('setsid', ready)}; "
        f"echo $$ > {pidfile}; wait"
    )
    spec = script(tmp_path, call("bash", command=command), DONE)
    client = ToolClient()
    argv = ["--model", spec, *SANDBOXED_MODE]
    async with running_agent(*argv, client=client) as (conn, agent, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        survivors: list[int] = []

        async def cancel_once_running() -> None:
            await wait_for_pids(pidfile, 1)
            assert ready.exists()
            # the two sleeps and the escapee (which left the session) carry the mark
            assert len(escapee.survivors()) >= 3
            await conn.cancel(session_id=sid)

        async with anyio.create_task_group() as tg:

            async def prompt() -> None:
                response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
                survivors.extend(escapee.survivors(unreaped_by=agent.pid))
                stops.append(response.stop_reason)

            stops: list[str] = []
            tg.start_soon(prompt)
            await cancel_once_running()
    client.close()
    assert stops == ["cancelled"]
    assert survivors == []
