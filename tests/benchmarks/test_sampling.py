"""The sampling loop the cancel-style modes share: uncounted warm-up rounds first, then rounds
of one sample per series in a fixed order, and the figures a series reduces to; and the fsync
floor the cancel mode samples beside the agents."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchmarks.measure import Result
from benchmarks.modes import cancel
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


def test_the_cancel_floor_appends_one_record_per_sample_beside_the_journals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    root = cancel.data_root()
    assert root == tmp_path / "share" and root.is_dir()  # where acp-server's data dir goes
    kind, _, mount = cancel.data_root_filesystem().partition(" at ")
    assert kind and mount.startswith("/")
    path = root / "floor.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        samples = [cancel.fsync_sample(fd) for _ in range(3)]
    finally:
        os.close(fd)
    assert all(s["ms"] > 0 for s in samples)
    assert path.read_bytes() == cancel.TURN_END_LINE * 3
    json.loads(cancel.TURN_END_LINE)  # a well-formed record line, as a journal's
