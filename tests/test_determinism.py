"""Deterministic mode (acp_server/determinism.py) in process: when it is on, the date the model
is told, the stepping clock and the per-prefix ids. `install()` sets the process's clock for
good, so it runs in the real process: tests/e2e/test_determinism.py (identical transcripts)."""

from __future__ import annotations

import pytest

from acp_server.determinism import ENV_VAR, EPOCH_MS, Determinism, SteppingClock, requested, today


@pytest.mark.parametrize(
    ("flag", "value", "on"),
    [
        (True, None, True),
        (False, None, False),
        (False, "1", True),
        (False, " Yes ", True),
        (False, "on", True),
        (False, "TRUE", True),
        (False, "0", False),
        (False, "no", False),
        (False, "", False),
    ],
)
def test_the_flag_or_the_variable_turns_it_on(flag: bool, value: str | None, on: bool) -> None:
    environ = {} if value is None else {ENV_VAR: value}
    assert requested(flag, environ) is on


def test_the_model_is_told_the_clocks_first_day() -> None:
    assert today() == "2026-01-01"


def test_the_clock_starts_at_the_epoch_and_steps_one_millisecond_per_reading() -> None:
    clock = SteppingClock()
    assert [clock(), clock(), clock()] == [EPOCH_MS, EPOCH_MS + 1, EPOCH_MS + 2]
    assert [SteppingClock(10, 5)() for _ in range(2)] == [10, 10]


def test_each_determinism_counts_its_own_ids_per_prefix_and_reads_its_own_clock() -> None:
    first, second = Determinism(), Determinism()
    assert [first.ids("sess"), first.ids("sess"), first.ids("turn")] == [
        "sess_0001",
        "sess_0002",
        "turn_0001",
    ]
    assert second.ids("sess") == "sess_0001"
    assert (first.clock(), first.clock(), second.clock()) == (EPOCH_MS, EPOCH_MS + 1, EPOCH_MS)
