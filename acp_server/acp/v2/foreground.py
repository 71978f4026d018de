"""A v2 session's foreground state as its client was told it: `running`, `requires_action`
(the work waits on the user), `idle` (with the stop reason of what ended).

Foreground work is a turn (from `TurnStarting` to `TurnSettled`) or a local command's answer
(`/mode`, `/model`, ...); they are counted, so one that ends while another goes on sends no idle
("completing an individual activity while other foreground work continues does not require an
idle boundary"), and the first that starts from idle sends `running`. Waits on the user
(permission requests, form questions, hooks consent) are counted too: the first makes the state
`requires_action` (for any wait, also while a parallel subagent could still work: a decision
of the v2 RFC), the last answer makes it `running` again unless the work was cancelled meanwhile
(its idle follows, and the updates the cancel still causes do not resume it); any other output
of the work while no wait is left also resumes `running`.

Every change is decided synchronously and its update queued on the one ordered writer before
anything else can run, so the update order is the order of the decisions. Every state update
is built by `_update`, which adds the session's background list.

The session's background commands are listed on every state update once the first one started
(`background`, each as its display terminal); a change of the list alone is a repeated snapshot
of the current state (an idle one without a stop reason: not a completion). See
docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from msgspec import UNSET

from acp_protocol.jsonrpc import ErrorObject
from acp_protocol.v2.session_update import ForegroundState, StateUpdate, StopReason
from acp_protocol.v2.tool_call import BackgroundTerminal, BackgroundWork

__all__ = ["Foreground"]


class Foreground:
    """One session's foreground state; `send` queues a `state_update`."""

    def __init__(self, send: Callable[[StateUpdate], Awaitable[None]]) -> None:
        self._send = send
        self.state: ForegroundState = "idle"
        self._activities = 0
        self._waits = 0
        self._cancelled = False
        """A wait ended because the work was cancelled: its idle follows, never `running`."""
        self._background: list[BackgroundWork] | None = None
        """The background list, once reported (None: not reporting yet)."""

    @property
    def busy(self) -> bool:
        """Whether foreground work runs (or waits on the user)."""
        return self._activities > 0

    def snapshot(self) -> StateUpdate:
        """The current state, as a resume reports it after its replay (an idle snapshot has
        no stop reason: it is not a completion)."""
        return self._update(self.state)

    def _update(
        self,
        state: ForegroundState,
        stop_reason: StopReason | None = None,
        error: ErrorObject | None = None,
    ) -> StateUpdate:
        """A state update carrying the background list once it is reported."""
        return StateUpdate(
            state=state,
            stop_reason=UNSET if stop_reason is None else stop_reason,
            error=UNSET if error is None else error,
            background=UNSET if self._background is None else list(self._background),
        )

    async def background(self, terminals: list[str]) -> None:
        """The background commands running now changed: a snapshot of the current state with
        the new list (`terminals`: their display terminals' ids)."""
        self._background = [BackgroundTerminal(terminal_id=name) for name in terminals]
        await self._send(self.snapshot())

    async def closed_background(self) -> None:
        """A close stopped background commands: the session is idle, `cancelled`, and nothing
        runs in its background."""
        self.state = "idle"
        self._background = []
        await self._send(self._update("idle", "cancelled"))

    async def begin(self) -> None:
        """Foreground work starts (a turn, or a local command's answer)."""
        self._activities += 1
        if self.state == "idle":
            self._cancelled = False
            self.state = "running"
            await self._send(self._update("running"))

    async def end(self, stop_reason: StopReason, error: ErrorObject | None = None) -> None:
        """Foreground work ended; idle (with its stop reason) when none is left."""
        self._activities = max(0, self._activities - 1)
        if self._activities or self.state == "idle":
            return
        self.state = "idle"
        self._waits = 0
        self._cancelled = False
        await self._send(self._update("idle", stop_reason, error))

    async def waiting(self) -> None:
        """A request to the user is about to be sent."""
        self._waits += 1
        if self.state == "running":
            self.state = "requires_action"
            await self._send(self._update("requires_action"))

    async def answered(self, *, resumed: bool) -> None:
        """A request to the user ended; `resumed`: the work goes on (not cancelled)."""
        self._waits = max(0, self._waits - 1)
        if resumed:
            await self.progressed()
        else:
            self._cancelled = True

    async def progressed(self) -> None:
        """The work produced output: it is running, unless it still waits on the user."""
        if self.state == "requires_action" and self._waits == 0 and not self._cancelled:
            self.state = "running"
            await self._send(self._update("running"))
