"""A running command is shown while it runs, through the real process and the official SDK
client: a client terminal is embedded in the tool call as soon as it exists, and a local
command's output reaches the tool call before the command ends.

Each command blocks until the test creates a file, and the test does that only after it saw
what it checks; so "before the end" is shown by order, never by timing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    FS_AND_TERMINAL,
    SANDBOXED,
    Session,
    ToolClient,
    agent_session,
    call,
    prompt_and_then,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

BLOCKED = "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second"
"""Prints `first`, then waits for the file `go`, then prints `second`."""


async def updates_until(session: Session, seen: Any) -> Any:
    """The first `tool_call_update` for which `seen(update)` is true, waiting for it."""
    client = session.client
    with anyio.fail_after(20):
        while True:
            for _, update in client.updates:
                if update.session_update == "tool_call_update" and seen(update):
                    return update
            await client.wait_for_updates(len(client.updates) + 1)


def terminal_ids(update: Any) -> list[str]:
    return [c.terminal_id for c in update.content or [] if c.type == "terminal"]


def texts(update: Any) -> str:
    return "".join(c.content.text for c in update.content or [] if c.type == "content")


async def test_a_client_terminal_is_embedded_when_it_starts(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, call("bash", command=BLOCKED), DONE)
    client = ToolClient()
    async with agent_session(
        ws, spec, "--mode", "bypass", client=client, caps=FS_AND_TERMINAL, env=SANDBOXED
    ) as s:
        live: list[Any] = []

        async def while_it_runs() -> None:
            update = await updates_until(s, lambda u: u.status != "completed" and terminal_ids(u))
            [terminal] = terminal_ids(update)
            running = client.terminals[terminal]
            live.append((update.status, running.process.returncode))
            with anyio.fail_after(20):  # the editor shows the terminal's output meanwhile
                # The fake terminal's reader fills a bytearray; nothing to wait on but it.
                while b"first" not in running.output:  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            (ws / "go").touch()

        stop, _ = await prompt_and_then(s, while_it_runs)
    assert stop == "end_turn"
    assert live == [("in_progress", None)]  # embedded while the command was still running
    updates = s.client.kinds("tool_call_update")
    embedded = next(i for i, u in enumerate(updates) if terminal_ids(u))
    final = next(i for i, u in enumerate(updates) if u.status == "completed")
    assert embedded < final
    assert terminal_ids(updates[final]) == terminal_ids(updates[embedded])
    assert "first\nsecond" in texts(updates[final])


async def test_a_local_command_streams_its_output_before_it_ends(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, call("bash", command=BLOCKED), DONE)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:

        async def while_it_runs() -> None:
            await updates_until(s, lambda u: u.status == "in_progress" and "first" in texts(u))
            (ws / "go").touch()

        stop, _ = await prompt_and_then(s, while_it_runs)
    assert stop == "end_turn"
    updates = s.client.kinds("tool_call_update")
    statuses = [u.status for u in updates]
    progress = [i for i, u in enumerate(updates) if u.status == "in_progress" and texts(u)]
    final = statuses.index("completed")
    assert progress and max(progress) < final
    assert texts(updates[progress[0]]).startswith("first")
    assert texts(updates[final]).startswith("first\nsecond\n[exit code: 0]")
    assert statuses.count("completed") == 1


async def test_a_long_output_is_shown_as_its_bounded_tail(tmp_path: Path, ws: Path) -> None:
    command = "seq 1 20000; echo last; while [ ! -e go ]; do sleep 0.05; done"
    spec = script(tmp_path, call("bash", command=command), DONE)
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:

        async def while_it_runs() -> None:
            update = await updates_until(s, lambda u: "last" in texts(u))
            shown.append(texts(update))
            (ws / "go").touch()

        shown: list[str] = []
        stop, _ = await prompt_and_then(s, while_it_runs)
    assert stop == "end_turn"
    [tail] = shown
    assert tail.endswith("20000\nlast\n")
    assert "\n1\n" not in tail and len(tail) <= 4096  # the tail, within the bound
