"""Crash repair: close the turns a dead process left open, so replay always sees them balanced.

A turn is open when the log has its `turn/start` but no `turn/end`; the process then died in the
middle of it. Repair closes each open turn, in the order the turns started, with:

- a synthetic `failed` `tool/result` marked ``synthetic="outcome_unknown"`` for every tool call
  of that turn that has no result (the tool may or may not have run: we cannot know), then
- ``turn/end`` with outcome ``{"kind": "interrupted"}``.

It also ends every background item the log started and never ended: the item died with the
process (docs/rfc/implemented/architecture/2026-12-06-background-work.md), so it gets a
``background/end`` with ``how: "unknown"``. A journal is open in one process at a time, so an
item of a journal opened from disk cannot still run.

Repair only computes the records; `acp_server.session.journal` appends them to the file and
fsyncs, so a repaired session loads clean next time and the repair happens once. An open step
(``step/start`` without ``step/end``) is left as it is: the turn end closes it for replay.
"""

from __future__ import annotations

from collections.abc import Sequence

from .log import SessionLog
from .recorder import Recorder
from .records import (
    BackgroundEnd,
    BackgroundStart,
    InterruptedOutcome,
    Record,
    TurnEndRecord,
    TurnStart,
    utc_now,
)

__all__ = ["OUTCOME_UNKNOWN_OUTPUT", "open_background_items", "open_turn_ids", "repair_records"]

OUTCOME_UNKNOWN_OUTPUT = "outcome unknown: the agent stopped before this tool call finished"
"""The output of the synthetic result crash repair gives a tool call that has none."""


def open_turn_ids(records: Sequence[Record]) -> list[str]:
    """The turns with a `turn/start` and no `turn/end`, in the order they started."""
    open_turns: dict[str, None] = {}
    for record in records:
        if isinstance(record, TurnStart):
            open_turns[record.turn_id] = None
        elif isinstance(record, TurnEndRecord):
            open_turns.pop(record.turn_id, None)
    return list(open_turns)


def open_background_items(records: Sequence[Record]) -> list[str]:
    """The background items with a `background/start` and no `background/end`, in order."""
    items: dict[str, None] = {}
    for record in records:
        if isinstance(record, BackgroundStart):
            items[record.item] = None
        elif isinstance(record, BackgroundEnd):
            items.pop(record.item, None)
    return list(items)


def repair_records(
    session_id: str, records: Sequence[Record], *, at: str | None = None
) -> list[Record]:
    """The records that close every open turn and end every open background item of
    `records` (empty when nothing is open).

    `at` stamps the repair records (default: now).
    """
    turn_ids = open_turn_ids(records)
    items = open_background_items(records)
    if not turn_ids and not items:
        return []
    stamp = at if at is not None else utc_now()
    log = SessionLog(session_id, list(records))
    repairs: list[Record] = []
    recorder = Recorder(repairs.append, clock=lambda: stamp)
    for turn_id in turn_ids:
        for call in log.open_tool_calls(turn_id):
            recorder.synthetic_result(
                turn_id, call.call_id, "outcome_unknown", OUTCOME_UNKNOWN_OUTPUT
            )
        recorder.turn_ended(turn_id, InterruptedOutcome())
    for item_id in items:
        recorder.background_ended(item_id, "unknown")
    return repairs
