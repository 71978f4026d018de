"""What a forked session starts from: its source's records up to the last ended turn.

A turn still running in the source (or one a crash left open, before repair) is not copied: a
fork holds only history whose every tool call has its result. Session settings recorded after
that turn (mode, model, "always" answers, the client's system prompt) are carried over, since
they hold from then on; the "always" answers only when the fork stays in the source's workspace
(a fork into another cwd must not bring the rules a user gave for a different repository).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import records as rec

SETTINGS = (rec.ModeChange, rec.ModelChange, rec.PermissionRule, rec.SystemPromptChange)
"""Records that belong to the session rather than to a turn."""


@dataclass(frozen=True)
class ForkPoint:
    records: list[rec.Record]
    """What the fork's journal starts with."""
    turn_id: str | None
    """The source's last ended turn, which the copy goes up to; None if it had none."""


def fork_point(records: Sequence[rec.Record], same_workspace: bool = True) -> ForkPoint:
    """The records a fork of a session with these records starts from; without its
    permission rules when the fork is in another workspace."""
    if not same_workspace:
        records = [r for r in records if not isinstance(r, rec.PermissionRule)]
    ends = [i for i, record in enumerate(records) if isinstance(record, rec.TurnEndRecord)]
    if not ends:
        return ForkPoint([r for r in records if isinstance(r, SETTINGS)], None)
    cut = ends[-1] + 1
    last = records[ends[-1]]
    assert isinstance(last, rec.TurnEndRecord)
    after = [r for r in records[cut:] if isinstance(r, SETTINGS)]
    return ForkPoint([*records[:cut], *after], last.turn_id)
