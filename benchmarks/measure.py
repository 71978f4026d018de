"""Shared measuring helpers: paths, limits, percentiles, RSS, target verdicts."""

from __future__ import annotations

import importlib.metadata
import math
import sys
from pathlib import Path
from typing import Any

Result = dict[str, Any]
REPO = Path(__file__).resolve().parents[1]
PROGRAMS = Path(__file__).resolve().parent / "programs"  # stand-alone programs modes spawn
SDK_DIST = "agent-client-protocol"
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize",'
    b'"params":{"protocolVersion":1,"clientCapabilities":{}}}\n'
)
IDLE_SETTLE_S = 0.5
RESPONSE_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 5.0
SUBJECT = "acp-server"
SUBJECT_V2 = "acp-server, ACP v2"
"""This checkout's acp-server, driven as an ACP v2 client (the same build, one more series)."""
# (label, metric key, operator, limit): each is checked as "value OP limit".
Target = tuple[str, str, str, float]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def vm_rss_mib(pid: int) -> float:
    """VmRSS of the process itself (not its children), from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024  # reported in kB (KiB)
    raise RuntimeError(f"no VmRSS for pid {pid}")


def subject_exe() -> Path:
    """The acp-server console script of this venv."""
    subject = Path(sys.executable).parent / SUBJECT
    if not subject.exists():
        sys.exit(f"bench: {subject} not found; run via `uv run benchmarks`")
    return subject


def versions() -> dict[str, str]:
    return {d: importlib.metadata.version(d) for d in (SUBJECT, SDK_DIST)}


def evaluate(targets: tuple[Target, ...], metrics: dict[str, float]) -> list[Result]:
    """One verdict per target: {"target", "value", "pass"}."""
    compare = {"<=": float.__le__, ">=": float.__ge__}
    return [
        {"target": label, "value": metrics[key], "pass": compare[op](float(metrics[key]), limit)}
        for label, key, op, limit in targets
    ]


def require_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            sys.exit(f"bench: --{name.replace('_', '-')} must be >= 1")
