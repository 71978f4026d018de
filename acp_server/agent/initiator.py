"""The initiator scope: which Agent started the work currently running.

It carries only the exact Agent, never a turn, step or signal: presence in the scope grants no
authority over any turn. A child agent's driver shadows it only inside itself (its tasks are
started from the parent's context, then set the child). See
docs/rfc/rejected/architecture/2026-11-30-signal-in-context-variable.md.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol


class Initiator(Protocol):
    """What the scope holds: an `Agent`. Structural, so the loop that enters the scope need not
    import `agent.py` (which imports the loop)."""

    @property
    def id(self) -> str:
        """The id of the session the agent runs."""
        ...


_initiator: ContextVar[Initiator | None] = ContextVar("acp_server_initiator", default=None)


def current_initiator() -> Initiator | None:
    """The Agent whose driver started the current work, if any."""
    return _initiator.get()


def enter_initiator(agent: Initiator) -> object:
    """Make `agent` the initiator for the current task; returns a token for `leave`."""
    return _initiator.set(agent)


def leave_initiator(token: object) -> None:
    """Restore the initiator that was current before `enter_initiator`."""
    _initiator.reset(token)  # type: ignore[arg-type]
