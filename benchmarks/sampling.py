"""The sampling loop every cancel-style mode shares, and the figures it reduces to.

A mode hands `alternate` one sampler per series (a callable that runs one timed cancel on its
long-lived agent and returns that sample's figures); `alternate` runs WARMUP uncounted rounds,
then `samples` counted ones, each round one sample of every series in order (A B A B ...), so
background load hits all series alike. `cancel_stats` reduces a series to its spread and its
stop reasons; `spread_cells` and `stop_reason_warnings` render them the same way in every mode.
Used by cancel, tool-cancel, sandbox-cancel and provider (its cancel part).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from benchmarks.measure import Result, percentile

WARMUP = 5  # uncounted samples per series before the timed ones
Sampler = Callable[[], Result]


def alternate(
    samplers: Mapping[str, Sampler], samples: int, warmup: int = WARMUP
) -> dict[str, list[Result]]:
    """`warmup` uncounted rounds, then `samples` counted rounds of one sample per series."""
    runs: dict[str, list[Result]] = {name: [] for name in samplers}
    for round_ in range(warmup + samples):
        for name, sample in samplers.items():
            result = sample()
            if round_ >= warmup:
                runs[name].append(result)
    return runs


def spread(ms: list[float]) -> Result:
    """p50, p90, p99 (nearest rank), max and min of a series of milliseconds."""
    return {
        "p50_ms": percentile(ms, 50),
        "p90_ms": percentile(ms, 90),
        "p99_ms": percentile(ms, 99),
        "max_ms": max(ms),
        "min_ms": min(ms),
    }


def cancel_stats(runs: list[Result], key: str = "ms") -> Result:
    """The spread of `key` over a series' samples, how many ended `cancelled`, and every stop
    reason seen (each sample carries "stop_reason")."""
    return {
        **spread([r[key] for r in runs]),
        "cancelled": sum(r["stop_reason"] == "cancelled" for r in runs),
        "stop_reasons": sorted({str(r["stop_reason"]) for r in runs}),
    }


def spread_cells(s: Result) -> str:
    """`p50 | p90 | p99 | max | min` of a spread, as Markdown table cells."""
    return " | ".join(f"{s[k]:.2f}" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms", "min_ms"))


def stop_reason_warnings(series: Mapping[str, Result], samples: int) -> list[str]:
    """One warning line per series in which not every sample ended `cancelled`."""
    return [
        f"- WARNING: {name}: stop reasons {s['stop_reasons']}"
        for name, s in series.items()
        if s["cancelled"] != samples
    ]
