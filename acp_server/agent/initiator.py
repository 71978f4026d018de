"""The initiator scope: which Agent started the work currently running.

It carries only the exact Agent, never a turn, step or signal: presence in the scope grants no
authority over any turn. A child agent's driver shadows it only inside itself (its tasks are
started from the parent's context, then set the child). See
docs/rfc/rejected/architecture/2026-11-30-signal-in-context-variable.md.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .agent import Agent

_initiator: ContextVar[Agent | None] = ContextVar("acp_server_initiator", default=None)


def current_initiator() -> Agent | None:
    """The Agent whose driver started the current work, if any."""
    return _initiator.get()


def enter_initiator(agent: Agent) -> object:
    """Make `agent` the initiator for the current task; returns a token for `leave`."""
    return _initiator.set(agent)


def leave_initiator(token: object) -> None:
    """Restore the initiator that was current before `enter_initiator`."""
    _initiator.reset(token)  # type: ignore[arg-type]
