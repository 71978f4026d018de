"""Turn signals for tests that call a tool, a seam or the policy directly, outside a turn."""

from __future__ import annotations

from acp_server.cancellation import TurnCancellation, TurnSignal, UserCancel


def fresh_signal() -> TurnSignal:
    """The signal of a turn nobody cancels."""
    return TurnCancellation().signal


def aborted_signal() -> TurnSignal:
    """The signal of a turn already cancelled by the user."""
    cancellation = TurnCancellation()
    cancellation.abort(UserCancel())
    return cancellation.signal
