"""A session's background items: commands that outlive the turn that started them, and never
the session.

`BackgroundItems` is one session's registry (its subagents share it). `start` spawns a command
through `spawn` (its own process group, the descendants' token, the watchdog) in a
task of the session's task group, not of the turn: the turn's signal never reaches it, so a
cancelled turn leaves it running. Its stdout and stderr go through one pipe into an
`OutputRing` (the last `output_bytes` bytes, with counts of what was cut). `stop` ends one item
and `aclose` every item (session close, delete, dispose, EOF, SIGTERM): each the way every
call ends, SIGTERM to the tree, `grace` seconds, SIGKILL, the join. A closed registry starts
nothing more. At most `limit` items are kept: an ended item makes room for a new one, a running
one does not (`TooManyItems` names them).

Listeners hear each start and each end, in order, awaited (the session journals them; a v2
client is shown them). Items that ended with an
earlier agent process are `restore`d as ended with an unknown outcome. See
docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from subprocess import STDOUT
from typing import Literal

import anyio
from anyio.abc import ByteReceiveStream, Process, TaskGroup, TaskStatus

from acp_server.process.groups import ProcessRegistry
from acp_server.process.output_ring import OutputRing
from acp_server.process.spawn import spawn

log = logging.getLogger(__name__)

ITEM_LIMIT = 8
"""Background items a session keeps at once (running, or ended and not yet replaced)."""

OUTPUT_BYTES = 256 * 1024
"""How much of an item's latest output is kept (stdout and stderr together)."""

_DRAIN_TIMEOUT = 1.0
"""After the tree is gone, how long to wait for the rest of its output (see runner.py)."""


Listener = Callable[["BackgroundItem"], Awaitable[None]]
"""Hears an item start or end."""


class TooManyItems(RuntimeError):
    """The session runs as many background items as it may."""


class BackgroundClosed(RuntimeError):
    """The session is ending: no background item may start."""


@dataclass(frozen=True)
class ItemEnd:
    """How an item ended."""

    how: Literal["exited", "stopped", "unknown"]
    """`exited` by itself, `stopped` by us, or `unknown`: with an earlier agent process."""
    exit_code: int | None = None
    posix_signal: int | None = None

    def describe(self) -> str:
        """How it ended, as the model and the user are told: `exited with code 0`, ..."""
        if self.how == "unknown":
            return "ended with the agent process that ran it; its outcome is unknown"
        if self.exit_code is not None:
            status = f"exit code {self.exit_code}"
        elif self.posix_signal is not None:
            status = f"killed by {signal_name(self.posix_signal)}"
        else:
            status = "exit status unknown"
        return f"was stopped ({status})" if self.how == "stopped" else f"exited ({status})"


def signal_name(number: int) -> str:
    """`SIGTERM` for 15; `signal 99` for a number without a name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class BackgroundItem:
    """One command running (or ended) in the background of a session."""

    def __init__(self, name: str, command: str, call_id: str | None, output_bytes: int) -> None:
        self.name = name
        """`bg_1`, `bg_2`, ...: unique in the session, never reused."""
        self.command = command
        """What it runs, as the model wrote it."""
        self.call_id = call_id
        """The tool call that started it."""
        self.output = OutputRing(output_bytes)
        self.end: ItemEnd | None = None
        """None while it runs."""
        self.end_told = False
        """Whether its reader was told it ended (`tell_end`): until then the status lines
        list it."""
        self.pid: int | None = None
        self._stop = anyio.Event()
        self._done = anyio.Event()

    @property
    def running(self) -> bool:
        return self.end is None

    def tell_end(self) -> None:
        """The reader has seen that it ended."""
        if self.end is not None:
            self.end_told = True

    async def wait(self) -> None:
        """Until it ended and its tree is gone."""
        await self._done.wait()

    def ended_before(self, end: ItemEnd) -> None:
        """Mark an item that ended before this process knew it (`restore`)."""
        self.end = end
        self._done.set()

    async def run(
        self,
        argv: Sequence[str],
        *,
        registry: ProcessRegistry | None,
        cwd: str,
        env: Mapping[str, str] | None,
        grace: float,
        on_end: Listener,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Spawn it, say it started (errors before that reach `start`'s caller), read its
        output until it exits or is stopped; then its tree is stopped and joined, and
        `on_end` hears how it ended. A cancellation of the task (the connection ending)
        stops it the same way."""
        process: Process | None = None
        exited = False
        try:
            async with spawn(
                argv, registry=registry, cwd=cwd, env=env, stderr=STDOUT, grace=grace
            ) as child:
                process = child.process
                self.pid = process.pid
                task_status.started()
                drained = anyio.Event()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_drain, process.stdout, self.output, drained)
                    async with anyio.create_task_group() as first:
                        first.start_soon(_then_cancel, process.wait, first)
                        first.start_soon(_then_cancel, self._stop.wait, first)
                    # An exit while the server shuts down (its registry kills every tree) is a
                    # stop of ours too.
                    exited = process.returncode is not None and (
                        registry is None or registry.is_open
                    )
                    with anyio.CancelScope(shield=True):
                        await child.settle(grace)
                        with anyio.move_on_after(_DRAIN_TIMEOUT):
                            await drained.wait()
                    tg.cancel_scope.cancel()
        finally:
            if process is not None:
                code = process.returncode
                self.end = ItemEnd(
                    how="exited" if exited else "stopped",
                    exit_code=code if code is not None and code >= 0 else None,
                    posix_signal=-code if code is not None and code < 0 else None,
                )
                with anyio.CancelScope(shield=True):  # told even when the task is cancelled
                    await on_end(self)
            self._done.set()

    def request_stop(self) -> None:
        self._stop.set()


class BackgroundItems:
    """One session's background items (see the module docstring)."""

    def __init__(
        self,
        task_group: TaskGroup | None,
        registry: ProcessRegistry | None,
        *,
        limit: int = ITEM_LIMIT,
        output_bytes: int = OUTPUT_BYTES,
        grace: float = 2.0,
    ) -> None:
        """`task_group` runs the items (the connection's: it outlives every turn; None: no
        item can start); `registry` is the server's, so shutdown stops them too."""
        self._task_group = task_group
        self._registry = registry
        self.limit = limit
        self.output_bytes = output_bytes
        self.grace = grace
        self._items: dict[str, BackgroundItem] = {}
        self._count = 0
        self._closed = False
        self._on_start: list[Listener] = []
        self._on_end: list[Listener] = []

    @property
    def items(self) -> list[BackgroundItem]:
        """The items kept, oldest first."""
        return list(self._items.values())

    @property
    def running(self) -> list[BackgroundItem]:
        return [item for item in self._items.values() if item.running]

    def get(self, name: str) -> BackgroundItem | None:
        return self._items.get(name)

    def on_start(self, listener: Listener) -> None:
        """Await `listener` with each item once it runs (before `start` returns)."""
        self._on_start.append(listener)

    def on_end(self, listener: Listener) -> None:
        """Await `listener` with each item once it ended and its tree is gone."""
        self._on_end.append(listener)

    def restore(self, name: str, command: str, call_id: str | None) -> BackgroundItem:
        """An item an earlier agent process ran, which ended with it (outcome unknown); its
        name is not handed out again."""
        item = BackgroundItem(name, command, call_id, 1)
        item.ended_before(ItemEnd("unknown"))
        self._keep(item)
        return item

    def reserve(self, name: str) -> None:
        """Never hand out `name` (an item of an earlier process, ended and journaled)."""
        number = _number(name)
        if number is not None:
            self._count = max(self._count, number)

    async def start(
        self,
        argv: Sequence[str],
        *,
        command: str,
        call_id: str | None,
        cwd: str,
        env: Mapping[str, str] | None = None,
    ) -> BackgroundItem:
        """Start `argv` in the background (`command` is what it is called); return it once
        its process runs. Raises `BackgroundClosed`, `TooManyItems`, or what spawning raises
        (`OSError`)."""
        if self._closed or self._task_group is None:
            raise BackgroundClosed("the session is ending: no background command may start")
        running = self.running
        if len(running) >= self.limit:
            names = ", ".join(f"{item.name} (`{item.command}`)" for item in running)
            raise TooManyItems(f"{len(running)} background commands run already: {names}")
        self._count += 1
        item = BackgroundItem(f"bg_{self._count}", command, call_id, self.output_bytes)
        self._keep(item)  # before the await: a second start meanwhile counts it
        try:
            await self._task_group.start(
                lambda task_status: item.run(
                    argv,
                    registry=self._registry,
                    cwd=cwd,
                    env=env,
                    grace=self.grace,
                    on_end=self._ended,
                    task_status=task_status,
                )
            )
        except BaseException:
            del self._items[item.name]
            raise
        for listener in list(self._on_start):
            await _tell(listener, item)
        return item

    async def stop(self, item: BackgroundItem) -> None:
        """Stop `item` (SIGTERM, grace, SIGKILL, join) and return once its tree is gone."""
        item.request_stop()
        with anyio.CancelScope(shield=True):
            await item.wait()

    async def aclose(self) -> None:
        """Refuse new items, stop every running one at once, and return once all are gone."""
        self._closed = True
        running = self.running
        for item in running:
            item.request_stop()
        with anyio.CancelScope(shield=True):
            for item in running:
                await item.wait()

    def _keep(self, item: BackgroundItem) -> None:
        """Keep `item`, forgetting the oldest ended items beyond the limit."""
        self.reserve(item.name)
        self._items[item.name] = item
        for old in list(self._items.values()):
            if len(self._items) <= self.limit:
                break
            if not old.running and old is not item:
                del self._items[old.name]

    async def _ended(self, item: BackgroundItem) -> None:
        for listener in list(self._on_end):
            await _tell(listener, item)


async def _tell(listener: Listener, item: BackgroundItem) -> None:
    """A listener's failure (a closed journal) is logged, never raised into the item."""
    try:
        await listener(item)
    except Exception:
        log.exception("a background listener failed for %s", item.name)


def _number(name: str) -> int | None:
    prefix, _, digits = name.partition("_")
    return int(digits) if prefix == "bg" and digits.isdigit() else None


async def _then_cancel(wait: Callable[[], Awaitable[object]], group: TaskGroup) -> None:
    """Await `wait()`, then end `group` (the first of the item's exit and a stop request)."""
    await wait()
    group.cancel_scope.cancel()


async def _drain(stream: ByteReceiveStream | None, ring: OutputRing, done: anyio.Event) -> None:
    try:
        if stream is not None:
            async for chunk in stream:
                ring.add(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()
