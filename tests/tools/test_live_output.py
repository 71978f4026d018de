"""A running command shown on its tool call (acp_server/tools/live_output.py): a client terminal
at once, and the local output's tail, escaped and capped, sent only when it changed. Through
the real process: tests/e2e/test_live_commands.py."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from acp_server.tools import live_output
from acp_server.tools.live_output import TAIL_CHARS, LiveOutput
from tests.support.tool_call import a_call

pytestmark = pytest.mark.anyio

HANG_GUARD_S = 30


async def test_a_client_terminal_is_shown_at_once() -> None:
    call = a_call()
    await LiveOutput(call).terminal("term_1")
    assert call.terminals == ["term_1"]


async def test_the_tail_is_sent_escaped_capped_and_only_when_it_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_output, "INTERVAL", 0)
    call = a_call()
    watch = LiveOutput(call)
    watch.output("x" * TAIL_CHARS)
    watch.output("\x1b[2Jend")  # a command trying to clear the editor's screen

    async def shown(count: int) -> None:
        while len(call.progress_texts) < count:
            await anyio.lowlevel.checkpoint()

    with anyio.fail_after(HANG_GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch.show_until_cancelled)
            await shown(1)
            for _ in range(20):  # many intervals pass with nothing new: nothing is sent
                await anyio.lowlevel.checkpoint()
            watch.output("")
            watch.output("more")
            await shown(2)
            tg.cancel_scope.cancel()
    first, second = call.progress_texts
    assert first.endswith("\\x1b[2Jend") and "\x1b" not in first
    assert first.startswith("x") and len(first) == TAIL_CHARS + len("\\x1b") - 1
    assert second.endswith("endmore")
