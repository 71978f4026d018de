"""Turn cancellation: the typed causes, the per-turn holder, and the signal it hands out.

One `TurnCancellation` exists per prospective turn; its `TurnSignal` is passed explicitly to
every seam of that turn and never stored anywhere that outlives it (no context variable: a
callback left behind by one turn must not gain authority over the next). See
docs/rfc/implemented/architecture/2026-11-30-explicit-turn-cancellation.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio
import msgspec

log = logging.getLogger(__name__)


class UserCancel(msgspec.Struct, frozen=True, tag_field="kind", tag="user"):
    """The person at the client asked to stop (ACP `session/cancel`)."""


class ParentCancel(msgspec.Struct, frozen=True, tag_field="kind", tag="parent"):
    """The parent agent's turn, which started this subagent, was aborted."""


CancelCause = UserCancel | ParentCancel
"""Who asked to cancel. Closed on purpose: mypy --strict rejects any other caller value."""


class Disposed(msgspec.Struct, frozen=True, tag_field="kind", tag="disposed"):
    """The agent's owner disposed it. Only the loop uses this; `cancel()` cannot pass it."""


AbortReason = UserCancel | ParentCancel | Disposed
"""Why a signal is aborted."""


class TurnAborted(Exception):
    """Raised by `TurnSignal.raise_if_aborted()` once the turn's signal is aborted."""


class TurnSignal:
    """Read-only view of one turn's cancellation; passed as a parameter, never stored.

    Cooperation is voluntary: code may check `aborted`, await `wait()`, or run blocking I/O
    inside `linked_scope()` so a cancel interrupts it at once.
    """

    __slots__ = ("_callbacks", "_event", "_reason")

    def __init__(self) -> None:
        self._reason: AbortReason | None = None
        self._event = anyio.Event()
        self._callbacks: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        """True once the turn has been interrupted."""
        return self._reason is not None

    @property
    def reason(self) -> AbortReason | None:
        """The first interruption (a detached frozen value), or None."""
        return self._reason

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        await self._event.wait()

    def raise_if_aborted(self) -> None:
        """Raise `TurnAborted` if the signal is aborted."""
        if self._reason is not None:
            raise TurnAborted(self._reason.__struct_config__.tag)

    def on_abort(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when the signal aborts (at once if it already has); returns a
        function that removes it. Callbacks run synchronously inside `cancel()`."""
        if self._reason is not None:
            callback()
            return _noop
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    @contextmanager
    def linked_scope(self) -> Iterator[anyio.CancelScope]:
        """A cancel scope that is cancelled when this signal aborts.

        For adapters around network reads and process waits: the awaited call stops at once
        instead of at its next chunk. The scope swallows its own cancellation; callers check
        `raise_if_aborted()` after the block.
        """
        with anyio.CancelScope() as scope:
            remove = self.on_abort(scope.cancel)
            try:
                yield scope
            finally:
                remove()

    def _abort(self, reason: AbortReason) -> bool:
        if self._reason is not None:
            return False
        self._reason = reason
        self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("a turn signal abort callback failed")
        return True


def _noop() -> None:
    return None


class TurnCancellation:
    """The holder of one turn's signal; only the agent loop owns one."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = TurnSignal()

    def abort(self, reason: AbortReason) -> bool:
        """Abort with a fresh frozen copy of `reason`; the first call wins (returns True)."""
        return self.signal._abort(msgspec.structs.replace(reason))
