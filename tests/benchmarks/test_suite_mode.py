"""The suite mode reads pytest's counts from its closing line (benchmarks/modes/suite.py)."""

from __future__ import annotations

from benchmarks.modes.suite import summary_counts


def test_the_counts_come_from_the_last_summary_line() -> None:
    output = "\n".join(
        [
            "tests/a.py::test_x 12 passed in a string that is not the summary",
            "==== 1 failed, 3305 passed, 5 skipped, 2 errors in 200.17s (0:03:20) ====",
        ]
    )
    assert summary_counts(output) == {"failed": 1, "passed": 3305, "skipped": 5, "errors": 2}
    assert summary_counts("3306 passed, 5 skipped in 509.16s (0:08:29)") == {
        "passed": 3306,
        "skipped": 5,
    }


def test_a_run_without_a_summary_line_has_no_counts() -> None:
    assert summary_counts("ImportError while loading conftest\n") == {}
