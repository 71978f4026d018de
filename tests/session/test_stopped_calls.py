"""Which journaled calls a turn's abort stopped while they ran
(acp_server/session/stopped_calls.py): only the shape the loop's abort path writes, read from
the records alone. That the loop writes it so: tests/agent/test_subagents.py and
tests/agent/test_cancel_in_task_group.py; live and replayed alike through the real process:
tests/e2e/test_v2_sessions.py::test_a_call_the_cancel_stopped_replays_as_it_was_shown_live."""

from __future__ import annotations

import pytest

from acp_server.session import records as rec
from acp_server.session.stopped_calls import ABORTED_CALL_OUTPUT, stopped_calls
from tests.support.legacy_calls import AT, asked, call


def failed(
    turn: str, call_id: str, output: str, synthetic: rec.Synthetic | None = None
) -> rec.ToolResult:
    return rec.ToolResult(
        turn_id=turn, call_id=call_id, status="failed", output=output, synthetic=synthetic, at=AT
    )


def ended(turn: str, outcome: rec.Outcome, *records: rec.Record) -> list[rec.Record]:
    calls = [
        call(r.call_id, "bash", command="sleep 9") for r in records if isinstance(r, rec.ToolResult)
    ]
    return [
        rec.TurnStart(turn_id=turn, at=AT),
        asked(turn, *calls),
        *records,
        rec.TurnEndRecord(turn_id=turn, outcome=outcome, at=AT),
    ]


@pytest.mark.parametrize("outcome", [rec.Aborted(), rec.DisposedOutcome()])
def test_the_running_call_of_an_aborted_or_disposed_turn_is_stopped(outcome: rec.Outcome) -> None:
    records = ended(
        "t1",
        outcome,
        rec.ToolResult(turn_id="t1", call_id="c1", status="completed", output="ok", at=AT),
        failed("t1", "c2", ABORTED_CALL_OUTPUT),
        failed("t1", "c3", ABORTED_CALL_OUTPUT, "not_run"),  # the calls after it never ran
    )
    assert stopped_calls(records) == {("t1", "c2")}


def test_a_call_that_never_started_is_not_stopped() -> None:
    records = ended("t1", rec.Aborted(), failed("t1", "c1", ABORTED_CALL_OUTPUT, "not_run"))
    assert stopped_calls(records) == set()


@pytest.mark.parametrize(
    "outcome", [rec.Completed(), rec.ErrorOutcome(message="x"), rec.InterruptedOutcome()]
)
def test_the_same_text_in_a_turn_that_was_not_aborted_is_a_failure(outcome: rec.Outcome) -> None:
    records = ended("t1", outcome, failed("t1", "c1", ABORTED_CALL_OUTPUT))
    assert stopped_calls(records) == set()


def test_only_the_last_result_of_the_turn_can_be_stopped() -> None:
    # A tool that failed with these words and a later call the abort met before it started.
    records = ended(
        "t1",
        rec.Aborted(),
        failed("t1", "c1", ABORTED_CALL_OUTPUT),
        rec.ToolResult(turn_id="t1", call_id="c2", status="completed", output="ok", at=AT),
    )
    assert stopped_calls(records) == set()


def test_another_output_is_not_stopped_and_turns_are_told_apart() -> None:
    records = [
        *ended("t1", rec.Aborted(), failed("t1", "c1", "exit 1")),
        *ended("t2", rec.Aborted(), failed("t2", "c2", ABORTED_CALL_OUTPUT)),
    ]
    assert stopped_calls(records) == {("t2", "c2")}
