"""A v2 session's background commands, shown as display terminals the client can cancel.

Each item (`bash` with `background: true`) is a display terminal whose id is the item's name
(`bg_1`: unique in the session and never reused, apart from the tool calls' `call_...` ids):

- when it starts: its `terminal_update` (the command, the absolute cwd, `capabilities.cancel`),
  then a state snapshot listing it, so the item is announced before the first list naming it;
- while it runs: the tail of its output as a replacement snapshot, at most every
  `INTERVAL` seconds, escaped as every command's output is (`printable`);
- when it ends: its `terminal_update` with the exit status (and no cancel capability), then a
  snapshot without it: the exit before the list that drops it.

`terminal/cancel` of an item's terminal stops that item alone (acp/v2/lifecycle.py); the exit
update confirms it. Nothing here waits on the client. See
docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup
from msgspec import UNSET

from acp_protocol.client import TerminalExitStatus
from acp_protocol.v2 import session_update as su
from acp_protocol.v2.tool_call import (
    TerminalCancelCapabilities,
    TerminalCapabilities,
    TerminalOutput,
    TerminalUpdate,
)
from acp_server.printable import printable
from acp_server.process.background import BackgroundItem, BackgroundItems, signal_name

from .foreground import Foreground

__all__ = ["INTERVAL", "TAIL_BYTES", "BackgroundTerminals"]

INTERVAL = 0.5
"""Seconds between two output snapshots of one item, at most one per interval."""

TAIL_BYTES = 4096
"""How much of the end of an item's output a snapshot shows."""

CANCELLABLE = TerminalCapabilities(cancel=TerminalCancelCapabilities())


class BackgroundTerminals:
    """One v2 session's background commands on its wire."""

    def __init__(
        self,
        send: Callable[[su.SessionUpdate], Awaitable[None]],
        foreground: Foreground,
        cwd: str,
        task_group: TaskGroup,
    ) -> None:
        self._send = send
        self._foreground = foreground
        self._cwd = cwd
        self._task_group = task_group
        self._items: BackgroundItems | None = None
        self._locks: dict[str, anyio.Lock] = {}

    def follow(self, items: BackgroundItems) -> None:
        """Show `items` from now on."""
        self._items = items
        items.on_start(self._started)
        items.on_end(self._ended)

    async def announce(self) -> None:
        """Each running item's terminal again (a resumed session's client may not have seen
        them), before the snapshot that lists them."""
        for item in self._running():
            await self._send(self._opened(item, output=True))

    def _running(self) -> list[BackgroundItem]:
        return self._items.running if self._items is not None else []

    def _opened(self, item: BackgroundItem, *, output: bool = False) -> TerminalUpdate:
        return TerminalUpdate(
            terminal_id=item.name,
            command=printable(item.command),
            cwd=self._cwd,
            output=_snapshot(item) if output else UNSET,
            capabilities=CANCELLABLE,
        )

    async def _started(self, item: BackgroundItem) -> None:
        self._locks[item.name] = anyio.Lock()
        await self._send(self._opened(item))
        await self._foreground.background([i.name for i in self._running()])
        self._task_group.start_soon(self._show_output, item)

    async def _ended(self, item: BackgroundItem) -> None:
        end = item.end
        status = TerminalExitStatus()
        if end is not None:
            status = TerminalExitStatus(
                exit_code=UNSET if end.exit_code is None else end.exit_code,
                signal=UNSET if end.posix_signal is None else signal_name(end.posix_signal),
            )
        lock = self._locks.pop(item.name, None) or anyio.Lock()
        async with lock:  # after any output snapshot being sent: the exit is the last
            await self._send(
                TerminalUpdate(
                    terminal_id=item.name,
                    output=_snapshot(item),
                    exit_status=status,
                    capabilities=None,  # no longer cancellable
                )
            )
        await self._foreground.background([i.name for i in self._running()])

    async def _show_output(self, item: BackgroundItem) -> None:
        """The tail of the item's output whenever it grew, once per interval, until it ends."""
        shown = 0  # the opening update showed no output
        lock = self._locks.get(item.name)
        while item.running and lock is not None:
            await anyio.sleep(INTERVAL)
            async with lock:
                if not item.running or item.output.written == shown:
                    continue
                shown = item.output.written
                await self._send(TerminalUpdate(terminal_id=item.name, output=_snapshot(item)))


def _snapshot(item: BackgroundItem) -> TerminalOutput:
    text = printable(item.output.tail(TAIL_BYTES))
    return TerminalOutput(data=base64.b64encode(text.encode()).decode())
