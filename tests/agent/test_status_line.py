"""The background commands' status line (acp_server/agent/status_line.py): one line per item
while it runs, with its new lines, and once more after it ended until the model was told; no
note at all otherwise. Real processes in a registry of their own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from acp_server.agent.status_line import HEADING, background_status, status_of
from acp_server.models.base import ModelRequest
from acp_server.process.background import BackgroundItem, BackgroundItems
from tests.support.turns import fresh_signal

pytestmark = pytest.mark.anyio

DEADLINE = 20.0


@asynccontextmanager
async def registry() -> AsyncIterator[BackgroundItems]:
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            items = BackgroundItems(tg, None)
            try:
                yield items
            finally:
                await items.aclose()


async def start(items: BackgroundItems, command: str, tmp_path: Path) -> BackgroundItem:
    return await items.start(
        ["bash", "-c", command], command=command, call_id=None, cwd=str(tmp_path)
    )


async def lines_printed(item: BackgroundItem, count: int) -> None:
    while item.output.lines < count:  # noqa: ASYNC110 - the item's pace
        await anyio.sleep(0.01)


async def test_each_item_has_a_line_while_it_runs_with_its_new_lines(tmp_path: Path) -> None:
    async with registry() as items:
        assert status_of(items) is None
        server = await start(items, "echo one; echo two; sleep 300", tmp_path)
        await lines_printed(server, 2)
        long = await start(items, "sleep 301 # " + "x" * 80 + "\nsecond line", tmp_path)
        assert status_of(items) == "\n".join(
            [
                HEADING,
                "- bg_1 `echo one; echo two; sleep 300`: running, 2 new lines",
                "- bg_2 `sleep 301 # " + "x" * 47 + "…`: running",
            ]
        )
        server.output.read(1000)
        assert status_of(items) == "\n".join(
            [
                HEADING,
                "- bg_1 `echo one; echo two; sleep 300`: running",
                "- bg_2 `sleep 301 # " + "x" * 47 + "…`: running",
            ]
        )
        await items.stop(server)
        await items.stop(long)


async def test_an_ended_item_is_listed_until_the_model_was_told(tmp_path: Path) -> None:
    async with registry() as items:
        item = await start(items, "echo done; exit 2", tmp_path)
        await item.wait()
        line = "- bg_1 `echo done; exit 2`: exited (exit code 2), 1 new line"
        assert status_of(items) == f"{HEADING}\n{line}"
        item.output.read(1000)
        item.tell_end()
        assert status_of(items) is None


async def test_the_listener_puts_the_status_on_the_request_and_nothing_else(
    tmp_path: Path,
) -> None:
    request = ModelRequest(session_id="s", system_prompt="p", messages=[], tools=[])
    async with registry() as items:
        configure = background_status(items)
        assert await configure(request, fresh_signal()) is request
        item = await start(items, "sleep 300", tmp_path)
        configured = await configure(request, fresh_signal())
        assert configured.status == f"{HEADING}\n- bg_1 `sleep 300`: running"
        assert (configured.messages, configured.system_prompt) == ([], "p")
        await items.stop(item)
