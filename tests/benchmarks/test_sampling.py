"""The sampling loop the cancel-style modes share: uncounted warm-up rounds first, then rounds
of one sample per series in a fixed order, and the figures a series reduces to."""

from __future__ import annotations

from benchmarks.measure import Result
from benchmarks.sampling import alternate, cancel_stats, spread_cells, stop_reason_warnings


def test_warm_up_rounds_are_run_but_not_counted_and_series_alternate() -> None:
    calls: list[str] = []

    def sampler(name: str) -> Result:
        calls.append(name)
        return {"name": name, "call": len(calls)}

    runs = alternate({"a": lambda: sampler("a"), "b": lambda: sampler("b")}, 3, warmup=2)
    assert calls == ["a", "b"] * 5
    assert [r["call"] for r in runs["a"]] == [5, 7, 9]
    assert [r["call"] for r in runs["b"]] == [6, 8, 10]


def test_a_series_reduces_to_its_spread_and_stop_reasons() -> None:
    runs: list[Result] = [
        {"ms": float(ms), "stop_reason": "cancelled" if ms != 7 else "end_turn"}
        for ms in range(1, 101)
    ]
    stats = cancel_stats(runs)
    assert (stats["p50_ms"], stats["p90_ms"], stats["p99_ms"]) == (50.0, 90.0, 99.0)
    assert (stats["max_ms"], stats["min_ms"]) == (100.0, 1.0)
    assert stats["cancelled"] == 99
    assert stats["stop_reasons"] == ["cancelled", "end_turn"]
    assert spread_cells(stats) == "50.00 | 90.00 | 99.00 | 100.00 | 1.00"
    assert stop_reason_warnings({"x": stats}, 100) == [
        "- WARNING: x: stop reasons ['cancelled', 'end_turn']"
    ]
    assert stop_reason_warnings({"x": stats | {"cancelled": 100}}, 100) == []
