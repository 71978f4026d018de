"""Background commands through the real `acp-server` and the official SDK client (ACP v1), on a
scripted model: a model starts `python -m http.server`, fetches from it in a later turn and
stops it; a user cancel leaves an item running; `session/close`, stdin EOF, SIGTERM and SIGKILL
of the agent leave nothing of it; `session/load` in a new agent process shows how it ended.
Survivors are found by their marks in /proc (tests/support/survivors.py). See
docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block

from tests.support.agent_process import running_agent
from tests.support.command_sandbox import needs_bwrap
from tests.support.survivors import Escapee
from tests.support.tool_client import DONE, FS_AND_TERMINAL, SANDBOXED, ToolClient, call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="/proc, the watchdog and the subreaper"),
]

WAIT_S = 30.0
"""A guard against a hang, no bound on speed."""


@pytest.fixture
def escapee(tmp_path: Path) -> Escapee:
    return Escapee(tmp_path)


def model(tmp_path: Path, *responses: list[dict[str, Any]]) -> str:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"responses": list(responses)}))
    return f"script:{path}"


@asynccontextmanager
async def agent(
    tmp_path: Path, spec: str, data_dir: Path
) -> AsyncIterator[tuple[Any, Any, ToolClient]]:
    """(connection, agent process, client) of `acp-server --mode bypass`, initialized."""
    client = ToolClient()
    argv = ("--model", spec, "--mode", "bypass", "--data-dir", str(data_dir))
    async with running_agent(*argv, client=client, env=SANDBOXED) as (conn, process, _, _):
        await conn.initialize(protocol_version=1)
        yield conn, process, client


async def prompt(conn: Any, sid: str) -> str:
    response = await conn.prompt(session_id=sid, prompt=[text_block("go")])
    return str(response.stop_reason)


async def until(condition: Any) -> None:
    with anyio.fail_after(WAIT_S):
        while not condition():  # noqa: ASYNC110 - other processes' state, read from /proc
            await anyio.sleep(0.02)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def background(escapee: Escapee, tmp_path: Path, trap: str = "") -> str:
    """A background command whose shell, a child in its group and a child that left the group
    (`setsid`) all carry the escapee's marks."""
    ready = tmp_path / "ready"
    return (
        f"{trap}{escapee.command('setsid', ready)}; {escapee.mark} {escapee.path} 300 & "
        f"{escapee.mark} exec {escapee.path} 301"
    )


async def test_a_model_starts_a_server_fetches_from_it_later_and_stops_it(
    tmp_path: Path, ws: Path
) -> None:
    port = free_port()
    (ws / "hello.txt").write_text("hello from the workspace\n")
    fetch = tmp_path / "fetch.py"
    fetch.write_text(
        "import time, urllib.request\n"
        "for _ in range(600):\n"
        "    try:\n"
        f"        print(urllib.request.urlopen('http://127.0.0.1:{port}/hello.txt').read().decode())\n"
        "        break\n"
        "    except OSError:\n"
        "        time.sleep(0.05)\n"
    )
    python = sys.executable
    spec = model(
        tmp_path,
        call("bash", command=f"{python} -m http.server {port} --bind 127.0.0.1", background=True),
        DONE,
        call("bash", command=f"{python} {fetch}"),
        DONE,
        call("bash_output", id="bg_1"),
        DONE,
        call("bash_stop", id="bg_1"),
        DONE,
    )
    async with agent(tmp_path, spec, tmp_path / "data") as (conn, _, client):
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        for _ in range(4):
            assert await prompt(conn, sid) == "end_turn"
        started, fetched, read, stopped = client.finished()
        assert started[0].endswith("in the background") and started[1] == "completed"
        assert started[2].startswith("Started in the background as bg_1.")
        assert fetched[1] == "completed" and "hello from the workspace" in fetched[2]
        assert read[2].startswith("bg_1 (`") and "is running." in read[2]
        assert '"GET /hello.txt HTTP/1.1" 200' in read[2]  # the server's log, on stderr
        assert "was stopped (killed by SIGTERM)." in stopped[2]
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # nothing listens any more


@pytest.mark.parametrize("end", ["session/close", "session/delete"])
async def test_a_user_cancel_leaves_the_item_running_and_the_sessions_end_stops_it(
    tmp_path: Path, ws: Path, escapee: Escapee, end: str
) -> None:
    # The item starts in a turn that is then cancelled: it runs on; session/close (or delete)
    # ends it (SIGTERM ignored: SIGKILL after the grace) with nothing of its tree left.
    spec = model(
        tmp_path,
        call("bash", command=background(escapee, tmp_path, "trap '' TERM; "), background=True),
        [{"delay_ms": 600000}],
    )
    async with agent(tmp_path, spec, tmp_path / "data") as (conn, process, _):
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        stops: list[str] = []
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                stops.append(await prompt(conn, sid))

            tg.start_soon(ask)
            await until(lambda: len(escapee.survivors()) >= 3)
            await conn.cancel(session_id=sid)
        assert stops == ["cancelled"]
        running = escapee.survivors()
        assert len(running) >= 3  # the cancel reached none of them
        if end == "session/close":
            await conn.close_session(session_id=sid)
        else:
            # The SDK client (schema 1.19) predates session/delete: through its connection.
            await conn._conn.send_request("session/delete", {"sessionId": sid})
        assert escapee.survivors(unreaped_by=process.pid) == []


@pytest.mark.parametrize("how", ["stdin-eof", "sigterm", "sigkill"])
async def test_the_end_of_the_agent_leaves_nothing_of_an_item(
    tmp_path: Path, ws: Path, escapee: Escapee, how: str
) -> None:
    # With SIGTERM ignored by the item; after SIGKILL the agent's watchdog stops it.
    spec = model(
        tmp_path,
        call("bash", command=background(escapee, tmp_path, "trap '' TERM; "), background=True),
        DONE,
    )
    async with agent(tmp_path, spec, tmp_path / "data") as (conn, process, _):
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        assert await prompt(conn, sid) == "end_turn"
        await until(lambda: len(escapee.survivors()) >= 3)
        if how == "stdin-eof":
            process.stdin.close()
        elif how == "sigterm":
            process.terminate()
        else:
            process.kill()
        with anyio.fail_after(WAIT_S):
            code = await process.wait()
        assert code == (-9 if how == "sigkill" else 0)
        await until(lambda: not escapee.survivors())
    assert escapee.survivors() == []


@pytest.mark.parametrize("ending", ["sigkill", "close"])
async def test_a_load_in_a_new_agent_process_shows_how_the_item_ended(
    tmp_path: Path, ws: Path, escapee: Escapee, ending: str
) -> None:
    data = tmp_path / "data"
    spec = model(
        tmp_path, call("bash", command=background(escapee, tmp_path), background=True), DONE
    )
    async with agent(tmp_path, spec, data) as (conn, process, _):
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        assert await prompt(conn, sid) == "end_turn"
        await until(lambda: len(escapee.survivors()) >= 3)
        if ending == "close":
            await conn.close_session(session_id=sid)
        else:
            process.kill()
            with anyio.fail_after(WAIT_S):
                await process.wait()
    await until(lambda: not escapee.survivors())
    async with agent(tmp_path, spec, data) as (conn, _, client):
        await conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[])
        [(_, status, text)] = client.finished()
        assert status == "completed"
        assert text.startswith("Started in the background as bg_1.")
        if ending == "close":
            assert text.endswith("\n[bg_1 has ended: it was stopped (killed by SIGTERM)]")
        else:
            assert text.endswith(
                "\n[bg_1 has ended: it ended with the agent process that ran it; its outcome "
                "is unknown]"
            )


@needs_bwrap
async def test_a_sandboxed_background_command_is_confined_and_dies_with_the_agent(
    tmp_path: Path, ws: Path
) -> None:
    # Sandboxed mode runs it under bubblewrap without a question: it writes in the workspace,
    # not in the home directory; SIGKILL of the agent ends it through bwrap's
    # --die-with-parent.
    escapee = Escapee(ws)  # in the workspace: the sandbox's /tmp is its own
    outside = Path.home() / f".{escapee.name}"
    command = (
        f"echo in > {ws / 'inside.txt'}; echo out > {outside} 2>/dev/null; "
        f"{escapee.mark} exec {escapee.path} 300"
    )
    spec = model(tmp_path, call("bash", command=command, background=True), DONE)
    client = ToolClient()
    argv = ("--model", spec, "--mode", "sandboxed", "--data-dir", str(tmp_path / "data"))
    async with running_agent(*argv, client=client) as (conn, process, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        assert await prompt(conn, sid) == "end_turn"
        assert client.permission_requests == []
        await until(lambda: bool(escapee.survivors()))
        assert (ws / "inside.txt").read_text() == "in\n"
        assert not outside.exists()
        process.kill()
        with anyio.fail_after(WAIT_S):
            await process.wait()
        await until(lambda: not escapee.survivors())


async def test_on_v1_an_item_shows_only_in_the_calls_of_the_turns_that_touch_it(
    tmp_path: Path, ws: Path
) -> None:
    # It ends between turns: nothing is sent then (nothing of a turn follows its answer);
    # the next turn's bash_output shows how it ended. A client that offers terminals is not
    # asked for one: the item is a local process of ours.
    data = tmp_path / "data"
    spec = model(
        tmp_path,
        call("bash", command="echo from the item", background=True),
        DONE,
        call("bash_output", id="bg_1"),
        DONE,
    )
    client = ToolClient()
    argv = ("--model", spec, "--mode", "bypass", "--data-dir", str(data))
    async with running_agent(*argv, client=client, env=SANDBOXED) as (conn, _, frames, _):
        await conn.initialize(protocol_version=1, client_capabilities=FS_AND_TERMINAL)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        assert await prompt(conn, sid) == "end_turn"
        answered = len(frames.received)
        journal = data / "sessions" / f"{sid}.jsonl"
        await until(lambda: '"type":"background/end"' in journal.read_text())
        assert await prompt(conn, sid) == "end_turn"
        later = frames.received[answered:]
    assert [method for method, _ in client.calls if method.startswith("terminal/")] == []
    [(_, _, started), (_, _, read)] = client.finished()
    assert started.startswith("Started in the background as bg_1.")
    assert read == "bg_1 (`echo from the item`) exited (exit code 0).\nfrom the item"
    first_call = client.kinds("tool_call")[0].tool_call_id
    assert [f for f in later if first_call in json.dumps(f)] == []  # nothing of turn 1 follows
    updates = [f for f in later if f.get("method") == "session/update"]
    answer = next(i for i, f in enumerate(later) if "stopReason" in json.dumps(f.get("result")))
    assert updates and all(later.index(f) < answer for f in updates)  # all of turn 2's
