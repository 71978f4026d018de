"""A session's background items (acp_server/process/background.py), with real processes: they
run in the session's task group and outlive the call that started them; a stop, the session's
end and the task group's end stop each through the one runner (SIGTERM, grace, SIGKILL, join),
with nothing of their process group left; the item limit and the output bound hold."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from acp_server.process import ProcessRegistry, group_members
from acp_server.process.background import (
    BackgroundClosed,
    BackgroundItem,
    BackgroundItems,
    ItemEnd,
    TooManyItems,
)
from tests.support.processes import assert_gone, wait_for_pids, write_pids

pytestmark = pytest.mark.anyio

DEADLINE = 20.0


@asynccontextmanager
async def session_items(**kwargs: object) -> AsyncIterator[BackgroundItems]:
    """A registry on a task group of its own, closed at the end, under a hang guard."""
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            items = BackgroundItems(tg, ProcessRegistry(), **kwargs)  # type: ignore[arg-type]
            try:
                yield items
            finally:
                await items.aclose()


async def start(items: BackgroundItems, script: str, tmp_path: Path) -> BackgroundItem:
    return await items.start(
        ["bash", "-c", script], command=script, call_id="c1", cwd=str(tmp_path)
    )


async def wait_for_output(item: BackgroundItem, text: str) -> None:
    while text.encode() not in b"".join(item.output._chunks):  # noqa: ASYNC110 - a pipe's pace
        await anyio.sleep(0.01)


async def test_an_item_runs_after_the_start_returns_and_its_end_is_heard(tmp_path: Path) -> None:
    ended: list[BackgroundItem] = []

    async def heard(item: BackgroundItem) -> None:
        ended.append(item)

    async with session_items() as items:
        items.on_end(heard)
        script = "echo hello; while [ ! -e go ]; do sleep 0.01; done; exit 3"
        item = await start(items, script, tmp_path)
        assert item.running and item.name == "bg_1" and item.pid is not None
        await wait_for_output(item, "hello")
        assert item.running and ended == []
        (tmp_path / "go").touch()
        await item.wait()
    assert ended == [item]
    assert item.end == ItemEnd("exited", exit_code=3)
    assert item.output.read(100).text.startswith("hello\n")


async def test_a_stop_ends_the_whole_tree_even_one_that_ignores_sigterm(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    async with session_items(grace=0.3) as items:
        item = await start(
            items, f"trap '' TERM; sleep 300 & {write_pids(pids, '$$', '$!')}; wait", tmp_path
        )
        members = await wait_for_pids(pids, 2)
        await items.stop(item)
        assert item.end == ItemEnd("stopped", posix_signal=signal.SIGKILL)
        assert group_members(members[0]) == []
        assert_gone(members)


async def test_closing_the_session_stops_every_item_and_starts_no_more(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    async with session_items() as items:
        one = await start(items, f"sleep 300 & {write_pids(pids, '$$', '$!')}; wait", tmp_path)
        two = await start(items, "sleep 301", tmp_path)
        members = await wait_for_pids(pids, 2)
        await items.aclose()
        assert [one.end, two.end] == [ItemEnd("stopped", posix_signal=signal.SIGTERM)] * 2
        assert_gone([*members, two.pid or 0])
        with pytest.raises(BackgroundClosed):
            await start(items, "true", tmp_path)


async def test_the_end_of_the_task_group_stops_the_items(tmp_path: Path) -> None:
    # The connection's task group ending (its owner cancelled) stops them the same way.
    pids = tmp_path / "pids"
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            items = BackgroundItems(tg, ProcessRegistry())
            item = await start(items, f"sleep 300 & {write_pids(pids, '$$', '$!')}; wait", tmp_path)
            members = await wait_for_pids(pids, 2)
            tg.cancel_scope.cancel()
    assert item.end is not None and item.end.how == "stopped"
    assert_gone(members)


async def test_the_limit_counts_running_items_and_ended_ones_make_room(tmp_path: Path) -> None:
    async with session_items(limit=2) as items:
        first = await start(items, "sleep 300", tmp_path)
        second = await start(items, "exit 0", tmp_path)
        await second.wait()
        third = await start(items, "sleep 301", tmp_path)  # takes the ended item's place
        assert [item.name for item in items.items] == ["bg_1", "bg_3"]
        with pytest.raises(TooManyItems, match=r"bg_1 \(`sleep 300`\), bg_3 \(`sleep 301`\)"):
            await start(items, "sleep 302", tmp_path)
        assert len(items.items) == 2 and first.running and third.running


async def test_an_item_that_prints_without_end_keeps_only_its_tail(tmp_path: Path) -> None:
    async with session_items(output_bytes=64 * 1024) as items:
        item = await start(items, "yes 'a line of output'", tmp_path)
        while item.output.written < 10 * 1024 * 1024:  # noqa: ASYNC110 - the pipe's pace
            await anyio.sleep(0.01)
        # Kept: the bound, however much was written.
        assert item.output.written - item.output.start == 64 * 1024
        read = item.output.read(1000)
        assert read.dropped > 9 * 1024 * 1024 and read.dropped_lines > 400_000
        assert read.text.startswith("a line of output\n")
        await items.stop(item)


async def test_a_program_that_cannot_start_leaves_no_item(tmp_path: Path) -> None:
    async with session_items() as items:
        with pytest.raises(FileNotFoundError):
            await items.start(["no-such-program"], command="x", call_id=None, cwd=str(tmp_path))
        assert items.items == []
        assert (await start(items, "true", tmp_path)).name == "bg_2"


async def test_restored_items_are_ended_with_an_unknown_outcome_and_their_names_kept(
    tmp_path: Path,
) -> None:
    async with session_items() as items:
        old = items.restore("bg_4", "python -m http.server", "c9")
        assert not old.running and old.end == ItemEnd("unknown")
        items.reserve("bg_7")
        assert (await start(items, "true", tmp_path)).name == "bg_8"


async def test_an_item_is_not_a_child_of_the_call_that_started_it(tmp_path: Path) -> None:
    # The start returns while the item runs; cancelling the caller's scope afterwards (a
    # cancelled turn) leaves it running: it belongs to the registry's task group.
    async with session_items() as items:
        with anyio.CancelScope() as turn:
            item = await start(items, "sleep 300", tmp_path)
            turn.cancel()
            await anyio.lowlevel.checkpoint()
        assert item.running
        assert item.pid is not None
        os.kill(item.pid, 0)


async def test_what_an_item_left_when_it_exited_is_stopped_with_it(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    async with session_items() as items:
        item = await start(items, f"sleep 300 & {write_pids(pids, '$!')}; exit 0", tmp_path)
        [child] = await wait_for_pids(pids)
        await item.wait()
        assert item.end == ItemEnd("exited", exit_code=0)
        assert_gone([child])
