"""The tool calls a turn's abort stopped while they ran, read back from the journal.

When a cancel (or a dispose) reaches a call that had started, the loop journals a plain failed
result with the output `ABORTED_CALL_OUTPUT` (`synthetic` unset: the tool did run), and the
turn then ends `aborted` or `disposed`. A v2 client saw that call `cancelled` live (v1 has no
such status and saw it `failed`). The journal holds no more than that shape, on purpose: the
abort's cause never enters it, and the records did not change for v2. So a replay that shows
what was seen live reads the status back from the shape, which only the abort path writes: the
last result of a turn that ended aborted or disposed, not made up by the runtime, failed with
exactly this output. A call that never started gets the same output with `synthetic:
"not_run"`, and was shown `failed` live: it is not one of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import records as rec

__all__ = ["ABORTED_CALL_OUTPUT", "stopped_calls"]

ABORTED_CALL_OUTPUT = "cancelled: the turn was aborted"
"""The output of the result the loop journals for a call its turn's abort reached (the live
update of that call says the same)."""


def stopped_calls(records: Iterable[rec.Record]) -> frozenset[tuple[str, str]]:
    """`(turn_id, call_id)` of every call in `records` that its turn's abort stopped while it
    ran (see the module's docstring for how they are told apart)."""
    last: dict[str, rec.ToolResult] = {}
    """Each open turn's last result that the runtime did not make up."""
    stopped: set[tuple[str, str]] = set()
    for record in records:
        if isinstance(record, rec.ToolResult) and record.synthetic is None:
            last[record.turn_id] = record
        elif isinstance(record, rec.TurnEndRecord):
            result = last.pop(record.turn_id, None)
            if (
                result is not None
                and isinstance(record.outcome, rec.Aborted | rec.DisposedOutcome)
                and result.status == "failed"
                and result.output == ABORTED_CALL_OUTPUT
            ):
                stopped.add((result.turn_id, result.call_id))
    return frozenset(stopped)
