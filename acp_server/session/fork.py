"""What a forked session starts from: its source's records up to the last ended turn.

A turn still running in the source (or one a crash left open, before repair) is not copied: a
fork holds only history whose every tool call has its result. Session settings recorded after
that turn (mode, model, "always" answers, the client's system prompt) are carried over, since
they hold from then on; the "always" answers only when the fork stays in the source's workspace
(a fork into another cwd must not bring the rules a user gave for a different repository).
Background items are not: they belong to the source session, which keeps running them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import records as rec
from .state import SETTINGS, SessionState

BACKGROUND = (rec.BackgroundStart, rec.BackgroundEnd)
"""The records of background items: the source session's own, never a fork's."""


@dataclass(frozen=True)
class ForkPoint:
    records: list[rec.Record]
    """What the fork's journal starts with."""
    turn_id: str | None
    """The source's last ended turn, which the copy goes up to; None if it had none."""


def fork_point(records: Sequence[rec.Record], same_workspace: bool = True) -> ForkPoint:
    """The records a fork of a session with these records starts from; without its
    permission rules when the fork is in another workspace."""
    records = [r for r in records if not isinstance(r, BACKGROUND)]
    if not same_workspace:
        records = [r for r in records if not isinstance(r, rec.PermissionRule)]
    state = SessionState.of(records)
    cut = 0 if state.last_turn_end is None else state.last_turn_end + 1
    after = [r for r in records[cut:] if isinstance(r, SETTINGS)]
    return ForkPoint([*records[:cut], *after], state.last_ended_turn)
