"""A running command shown on its tool call: its client terminal at once, or the tail of its
local output, at most every `INTERVAL` seconds and at most `TAIL_CHARS` characters.

Throttled because a chatty command (a build, `seq`) prints far faster than an editor can
redraw, and every update crosses the pipe; bounded because each update carries the whole text.
The tail is shown with its control and bidirectional characters escaped (`printable`): a
command must not clear the user's screen or write the clipboard through the editor.
"""

from __future__ import annotations

import anyio

from acp_server.printable import printable
from acp_server.tools.base import ToolCallContext

INTERVAL = 0.2
"""Seconds between two progress updates of one command, at most one per interval."""

TAIL_CHARS = 4096
"""How much of the end of the output a progress update shows."""


class LiveOutput:
    """A `CommandWatch` that shows a command on its tool call while it runs."""

    def __init__(self, call: ToolCallContext) -> None:
        self._call = call
        self._tail = ""
        self._changed = False

    async def terminal(self, terminal_id: str) -> None:
        await self._call.terminal(terminal_id)

    def output(self, text: str) -> None:
        self._tail = (self._tail + text)[-TAIL_CHARS:]
        self._changed = self._changed or bool(text)

    async def show_until_cancelled(self) -> None:
        """Send the latest tail whenever it changed, once per interval (run it in a task
        group and cancel that when the command ended)."""
        while True:
            await anyio.sleep(INTERVAL)
            if self._changed:
                self._changed = False
                await self._call.progress(printable(self._tail))
