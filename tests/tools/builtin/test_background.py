"""`bash` with `background: true`, `bash_output` and `bash_stop`
(acp_server/tools/builtin/shell.py, acp_server/tools/builtin/background.py) on real processes:
the start answers at once with the item's name while it runs, a read returns what is new with
what was cut, a stop ends the tree and says how, and the refusals name what to do instead."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.cancellation import TurnAborted
from acp_server.process import ProcessRegistry, group_members
from acp_server.process.background import BackgroundItems
from acp_server.tools.base import Tool, ToolOutput
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.workspace import PathRoots
from tests.support.processes import assert_gone, wait_for_pids, write_pids
from tests.support.tool_call import a_call
from tests.support.turns import aborted_signal, fresh_signal

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("module_subreaper")]

DEADLINE = 30.0


class Session:
    """The built-in tools of one session with its background items."""

    def __init__(self, root: Path, items: BackgroundItems, max_bytes: int) -> None:
        self.root = root
        self.items = items
        budget_tools = builtin_tools(
            PathRoots(str(root), []), LocalFiles(), LocalCommands(), background=items
        )
        self.tools: dict[str, Tool] = {tool.name: tool for tool in budget_tools}
        for name in ("bash_output", "bash_stop"):
            self.tools[name].max_bytes = max_bytes  # type: ignore[attr-defined]

    async def run(self, name: str, **arguments: Any) -> ToolOutput:
        return await self.tools[name].run(arguments, a_call(f"call_{name}"), fresh_signal())


@asynccontextmanager
async def session(
    tmp_path: Path, *, max_bytes: int = 64 * 1024, **kwargs: Any
) -> AsyncIterator[Session]:
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            items = BackgroundItems(tg, ProcessRegistry(), **kwargs)
            try:
                yield Session(tmp_path, items, max_bytes)
            finally:
                await items.aclose()


async def until_printed(s: Session, name: str, count: int) -> None:
    item = s.items.get(name)
    assert item is not None
    while item.output.lines < count:  # noqa: ASYNC110 - the item's pace
        await anyio.sleep(0.01)


async def test_a_background_start_answers_at_once_and_the_item_runs_on(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    async with session(tmp_path) as s:
        started = await s.run(
            "bash", command=f"{write_pids(pids, '$$')}; echo ready; sleep 300", background=True
        )
        assert not started.failed
        assert started.text.startswith("Started in the background as bg_1.")
        [pid] = await wait_for_pids(pids)
        item = s.items.get("bg_1")
        assert item is not None and item.running and item.call_id == "call_bash"
        assert s.tools["bash"].title({"command": "sleep 300", "background": True}) == (
            "Run `sleep 300` in the background"
        )
        await until_printed(s, "bg_1", 1)
        read = await s.run("bash_output", id="bg_1")
        assert read.text.startswith("bg_1 (`") and read.text.endswith("…`) is running.\nready")
        again = await s.run("bash_output", id="bg_1")
        assert again.text.endswith("is running.\n(no new output)")
        stopped = await s.run("bash_stop", id="bg_1")
        assert "was stopped (killed by SIGTERM)." in stopped.text
        assert_gone([pid])
        assert group_members(pid) == []
        assert not item.running and item.end_told


async def test_an_ended_item_says_how_and_its_last_output_stays_readable(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        await s.run("bash", command="echo one; echo two >&2; exit 4", background=True)
        item = s.items.get("bg_1")
        assert item is not None
        await item.wait()
        assert not item.end_told
        read = await s.run("bash_output", id="bg_1")
        assert (
            read.text == "bg_1 (`echo one; echo two >&2; exit 4`) exited (exit code 4).\none\ntwo"
        )
        assert item.end_told
        stop = await s.run("bash_stop", id="bg_1")  # already ended: nothing to stop
        assert stop.text.endswith("exited (exit code 4).\n(no new output)")


async def test_a_read_says_what_was_dropped_and_what_is_left(tmp_path: Path) -> None:
    async with session(tmp_path, max_bytes=20, output_bytes=1024) as s:
        await s.run("bash", command="seq 1 2000", background=True)
        item = s.items.get("bg_1")
        assert item is not None
        await item.wait()
        read = await s.run("bash_output", id="bg_1")
        lines = read.text.split("\n")
        assert lines[0] == "bg_1 (`seq 1 2000`) exited (exit code 0)."
        assert lines[1].startswith("[") and "lines) it printed before this were dropped" in lines[1]
        assert lines[1].endswith("only its last 1 KiB are kept]")
        assert lines[-1].startswith("[") and "more bytes wait: call bash_output again" in lines[-1]
        assert len("\n".join(lines[2:-1]).encode()) <= 20


async def test_the_refusals_say_what_to_do(tmp_path: Path) -> None:
    async with session(tmp_path, limit=1) as s:
        await s.run("bash", command="sleep 300", background=True)
        second = await s.run("bash", command="sleep 301", background=True)
        assert second.failed
        assert second.text == (
            "not started: 1 background commands run already: bg_1 (`sleep 300`); stop one "
            "with bash_stop first"
        )
        unknown = await s.run("bash_output", id="bg_9")
        assert unknown.failed and "no background command 'bg_9'" in unknown.text
        assert "(its background commands: bg_1)" in unknown.text
        await s.items.aclose()
        closed = await s.run("bash", command="true", background=True)
        assert closed.failed and "the session is ending" in closed.text


async def test_without_background_items_a_background_start_is_refused(tmp_path: Path) -> None:
    roots = PathRoots(str(tmp_path), [])
    [bash] = [t for t in builtin_tools(roots, LocalFiles(), LocalCommands()) if t.name == "bash"]
    out = await bash.run({"command": "true", "background": True}, a_call(), fresh_signal())
    assert out.failed and "not available here" in out.text


async def test_a_restored_item_says_its_outcome_is_unknown(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        s.items.restore("bg_3", "python -m http.server", "call_old")
        read = await s.run("bash_output", id="bg_3")
        assert read.text == (
            "bg_3 (`python -m http.server`) ended with the agent process that ran it; its "
            "outcome is unknown.\n(no new output)"
        )


async def test_an_aborted_turn_starts_nothing(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        with pytest.raises(TurnAborted):
            await s.tools["bash"].run(
                {"command": "sleep 300", "background": True}, a_call(), aborted_signal()
            )
        assert s.items.items == []


async def test_timeout_ms_does_not_apply_in_the_background(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        started = await s.run(
            "bash", command="sleep 0.5; echo alive", background=True, timeout_ms=1
        )
        assert not started.failed
        item = s.items.get("bg_1")
        assert item is not None
        await item.wait()
        read = await s.run("bash_output", id="bg_1")
        assert read.text.endswith("exited (exit code 0).\nalive")
