"""Crash repair: close the turns a dead process left open, so replay always sees them balanced.

A turn is open when the log has its `turn/start` but no `turn/end`; the process then died in the
middle of it. Repair closes each open turn, in the order the turns started, with:

- a synthetic `failed` `tool/result` marked ``synthetic="outcome_unknown"`` for every tool call
  of that turn that has no result (the tool may or may not have run: we cannot know), then
- ``turn/end`` with outcome ``{"kind": "interrupted"}``.

Repair only computes the records; `acp_server.session.journal` appends them to the file and
fsyncs, so a repaired session loads clean next time and the repair happens once. An open step
(``step/start`` without ``step/end``) is left as it is: the turn end closes it for replay.
"""

from __future__ import annotations

from collections.abc import Sequence

from .log import SessionLog
from .recorder import Recorder
from .records import InterruptedOutcome, Record, TurnEndRecord, TurnStart, utc_now

__all__ = ["OUTCOME_UNKNOWN_OUTPUT", "open_turn_ids", "repair_records"]

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


def repair_records(
    session_id: str, records: Sequence[Record], *, at: str | None = None
) -> list[Record]:
    """The records that close every open turn of `records` (empty when nothing is open).

    `at` stamps the repair records (default: now).
    """
    turn_ids = open_turn_ids(records)
    if not turn_ids:
        return []
    stamp = at if at is not None else utc_now()
    log = SessionLog(session_id, list(records))
    repairs: list[Record] = []
    recorder = Recorder(repairs.append, clock=lambda: stamp)
    for turn_id in turn_ids:
        for call in log.open_tool_calls(turn_id):
            recorder.tool_result(
                turn_id,
                call.call_id,
                failed=True,
                output=OUTCOME_UNKNOWN_OUTPUT,
                synthetic="outcome_unknown",
            )
        recorder.turn_ended(turn_id, InterruptedOutcome())
    return repairs
