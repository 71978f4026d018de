"""File safety through the real `acp-server` process and the official SDK client: special
files refused at once, long reads stopped by a cancel, stdin EOF ending the process, a racing
symlink swap refused end to end, permission questions that name where a path really goes, and
files created through a client's `fs/*` reported as created.

Models are scripted (`--model script:PATH`); see tests/support/tool_client.py for the client.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError, text_block
from acp.schema import ClientCapabilities, ReadTextFileResponse

from tests.support.agent_process import running_agent
from tests.support.hostile_files import GIB, SWAPPER, has_rename_exchange, sparse_file
from tests.support.scripted_model import script
from tests.support.tool_client import (
    DONE,
    FS,
    ToolClient,
    agent_session,
    call,
    prompt_and_then,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

SECRET = "SECRET-OUTSIDE"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))


# Special files and long reads -----------------------------------------------------------------


async def test_a_fifo_read_fails_at_once_and_stdin_eof_then_ends_the_process(
    tmp_path: Path, ws: Path
) -> None:
    os.mkfifo(ws / "pipe")  # no writer ever: an ordinary open for reading blocks forever
    spec = script(tmp_path, call("read_file", path="pipe"), DONE)
    client = ToolClient()
    async with running_agent("--model", spec, client=client) as (conn, process, _, _):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(ws), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
        [(title, status, text)] = client.finished()
        assert (title, status) == ("Read pipe", "failed")
        assert text == (
            f"Refused: {ws}/pipe is a FIFO (named pipe), not a regular file; only regular files "
            "are used"
        )
        process.stdin.close()
        with anyio.fail_after(30):  # guards a hang; the exit itself is the assertion
            assert await process.wait() == 0


async def test_a_cancel_stops_a_long_read_and_the_session_goes_on(tmp_path: Path, ws: Path) -> None:
    # Finding line 2 means reading 64 GiB (of a sparse hole): minutes, unless stopped.
    sparse_file(ws / "huge.txt", 64 * GIB, b"x" * 9000, b"\nline 2\n")
    spec = script(tmp_path, call("read_file", path="huge.txt", offset=2), DONE, [{"text": "ok"}])
    async with agent_session(ws, spec) as s:

        async def cancel_once_reading() -> None:
            with anyio.fail_after(30):
                while not any(
                    getattr(u, "status", None) == "in_progress"
                    for u in s.client.kinds("tool_call_update")
                ):
                    await s.client.wait_for_updates(len(s.client.updates) + 1)
            await anyio.sleep(0.1)  # inside the scan, in its worker thread
            await s.conn.cancel(session_id=s.sid)

        with anyio.fail_after(60):
            stop, _ = await prompt_and_then(s, cancel_once_reading)
        assert stop == "cancelled"
        assert [status for _, status, _ in s.client.finished()] == ["failed"]
        assert await s.prompt() == "end_turn"


async def test_sigterm_during_a_long_read_ends_the_process(tmp_path: Path, ws: Path) -> None:
    sparse_file(ws / "huge.txt", 64 * GIB, b"x" * 9000, b"\nline 2\n")
    spec = script(tmp_path, call("read_file", path="huge.txt", offset=2), DONE)
    client = ToolClient()
    answers: list[str] = []
    async with running_agent("--model", spec, client=client) as (conn, process, _, _):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(ws), mcp_servers=[])

        async def ask() -> None:
            response = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            answers.append(str(response.stop_reason))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            with anyio.fail_after(30):
                while not any(
                    getattr(u, "status", None) == "in_progress"
                    for u in client.kinds("tool_call_update")
                ):
                    await client.wait_for_updates(len(client.updates) + 1)
            await anyio.sleep(0.1)  # inside the scan, in its worker thread
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(30):  # guards a hang; the exit itself is the assertion
                assert await process.wait() == 0
    assert answers == ["cancelled"]  # the disposed turn was answered before the exit


async def test_a_workspace_hooks_file_that_is_a_fifo_does_not_block_the_session(
    tmp_path: Path, ws: Path
) -> None:
    (ws / ".acp-server").mkdir()
    os.mkfifo(ws / ".acp-server" / "hooks.json")  # read at session/new: it used to hang there
    spec = script(tmp_path, [{"text": "hello"}])
    with anyio.fail_after(30):  # guards a hang; the answers themselves are the assertions
        async with agent_session(ws, spec) as s:
            assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []  # no hooks loaded, so none to consent to


async def test_a_nul_byte_in_a_pattern_or_path_fails_only_that_call(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("print('a')\n")
    spec = script(
        tmp_path,
        call("glob", pattern="src/\0/*.py"),
        call("grep", pattern="print", path="src\0"),
        call("glob", pattern="src/*.py"),
        DONE,
    )
    async with agent_session(ws, spec) as s:
        assert await s.prompt() == "end_turn"
    [(_, glob, glob_text), (_, grep, grep_text), (_, after, after_text)] = s.client.finished()
    assert (glob, grep, after) == ("failed", "failed", "completed")
    assert "contains a NUL byte" in glob_text and "contains a NUL byte" in grep_text
    assert after_text == f"{ws}/src/a.py"


# A racing swap, end to end --------------------------------------------------------------------


@pytest.fixture
def swapped_dir(tmp_path: Path, ws: Path) -> Iterator[Path]:
    """ws/d and ws/.d-link (a symlink to tmp/outside) trading places nonstop."""
    if not has_rename_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not supported here")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text(f"{SECRET}\n")
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("inside\n")
    (ws / ".d-link").symlink_to(outside)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(ws / "d"), str(ws / ".d-link")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "swapping\n"
        yield outside
    finally:
        swapper.kill()
        swapper.wait()
        assert swapper.stdout is not None
        swapper.stdout.close()


async def test_a_racing_symlink_swap_is_refused_never_crossed(
    tmp_path: Path, ws: Path, swapped_dir: Path
) -> None:
    rounds = 150
    calls: list[dict[str, Any]] = []
    for i in range(rounds):
        calls += call("read_file", path="d/f.txt")
        calls += call("write_file", path=f"d/new{i}.txt", content="x\n")
    spec = script(tmp_path, calls, DONE)
    async with agent_session(ws, spec, "--mode", "accept_edits") as s:
        assert await s.prompt() == "end_turn"
        finished = s.client.finished()
    assert len(finished) == 2 * rounds
    crossed = [text for _, _, text in finished if SECRET in text]
    written_outside = sorted(set(os.listdir(swapped_dir)) - {"f.txt"})
    assert (crossed, written_outside) == ([], [])
    refused = [text for _, status, text in finished if status == "failed"]
    assert refused, "the swap never met a tool call: the race was not exercised"
    odd = [t for t in refused if "outside the workspace" not in t and "changed while" not in t]
    assert odd == []


# Creating files through a client's fs/* -------------------------------------------------------


class EmptyTextClient(ToolClient):
    """A client that answers a read of a missing file with empty text (as a terminal UI did)."""

    async def read_text_file(
        self,
        path: str,
        session_id: str,
        limit: int | None = None,
        line: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.calls.append(("fs/read_text_file", path))
        return ReadTextFileResponse(content=self.buffers.get(path, ""))


class NotFoundClient(ToolClient):
    """A client that answers a read of a missing file with "Resource not found" (and shows the
    error to its user, as a command-line client did)."""

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


@pytest.mark.parametrize("client_type", [NotFoundClient, EmptyTextClient])
async def test_a_new_file_is_created_without_reading_it_through_the_client(
    tmp_path: Path, ws: Path, client_type: type[ToolClient]
) -> None:
    (ws / "old.txt").write_text("old\n")
    client = client_type(buffers={str(ws / "old.txt"): "old\n"})
    spec = script(
        tmp_path,
        call("write_file", path="sub/new.txt", content="one line\n"),
        call("write_file", path="old.txt", content="new\nlines\n"),
        DONE,
    )
    caps = ClientCapabilities(fs=FS)
    async with agent_session(ws, spec, "--mode", "accept_edits", client=client, caps=caps) as s:
        assert await s.prompt() == "end_turn"
        diffs = [c for u in s.wire_updates("tool_call_update") for c in u.get("content") or []]
    new, old = str(ws / "sub" / "new.txt"), str(ws / "old.txt")
    assert client.calls == [
        ("fs/write_text_file", new),  # nothing on disk there: no read, so no error to show
        ("fs/read_text_file", old),  # the old text, for the diff
        ("fs/write_text_file", old),
    ]
    assert client.finished() == [
        ("Write sub/new.txt", "completed", f"Created {new} (1 line)"),
        ("Write old.txt", "completed", f"Overwrote {old} (2 lines, previously 1)"),
    ]
    assert [(d["path"], d.get("oldText")) for d in diffs if d["type"] == "diff"] == [
        (new, None),
        (old, "old\n"),
    ]


# Permission questions name where a path really goes -------------------------------------------


def content(path: Path) -> str:
    return path.read_text()


@pytest.fixture
def outside_file(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "dotfile"
    path.parent.mkdir(exist_ok=True)
    path.write_text("outside content\n")
    return Path(os.path.realpath(path))


async def test_a_symlinked_file_is_asked_about_by_its_real_target(
    tmp_path: Path, ws: Path, outside_file: Path
) -> None:
    (ws / "README.md").symlink_to(outside_file)  # a cloned repository can carry such a link
    spec = script(tmp_path, call("write_file", path="README.md", content="pwned\n"), DONE)
    async with agent_session(ws, spec, client=ToolClient(["reject_once"])) as s:
        assert await s.prompt() == "end_turn"
    assert s.client.asked_titles == [f"Write README.md → {outside_file} (outside the workspace)"]
    assert [status for _, status, _ in s.client.finished()] == ["failed"]
    assert content(outside_file) == "outside content\n"


async def test_accept_edits_refuses_a_symlinked_file_naming_its_target(
    tmp_path: Path, ws: Path, outside_file: Path
) -> None:
    (ws / "README.md").symlink_to(outside_file)
    spec = script(tmp_path, call("write_file", path="README.md", content="pwned\n"), DONE)
    async with agent_session(ws, spec, "--mode", "accept_edits") as s:
        assert await s.prompt() == "end_turn"
    assert s.client.permission_requests == []
    [(_, status, text)] = s.client.finished()
    assert status == "failed"
    assert f"denied: {outside_file} is outside the workspace (only default mode asks" in text
    assert content(outside_file) == "outside content\n"


async def test_a_hard_linked_file_is_treated_as_possibly_outside(
    tmp_path: Path, ws: Path, outside_file: Path
) -> None:
    os.link(outside_file, ws / "notes.txt")
    linked = ws / "notes.txt"
    spec = script(
        tmp_path,
        call("write_file", path="notes.txt", content="edited\n"),
        call("read_file", path="notes.txt"),  # reading asks nothing: it changes nothing outside
        DONE,
        call("write_file", path="notes.txt", content="allowed\n"),
        DONE,
    )
    async with agent_session(ws, spec, "--mode", "accept_edits") as s:
        assert await s.prompt() == "end_turn"
        [(_, write, text), (_, read, _)] = s.client.finished()
        assert (write, read) == ("failed", "completed")
        assert f"denied: {linked} has 2 hard links, so the same file may be outside" in text
        assert content(outside_file) == "outside content\n"
    async with agent_session(ws, spec, client=ToolClient(["allow_once"])) as s:
        assert await s.prompt() == "end_turn"  # (the script's first response again)
    assert s.client.asked_titles == [
        f"Write notes.txt ({linked} has 2 hard links, so the same file may be outside the "
        "workspace)"
    ]
    assert content(outside_file) == "edited\n"  # the user allowed it, knowing
