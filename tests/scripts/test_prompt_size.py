"""`scripts/prompt_size.py` runs as a file and shows the compact variant smaller than the full
one (the figures in docs/benchmarks.md come from it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "prompt_size.py"


def test_the_compact_variant_is_smaller() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split("|") for line in result.stdout.splitlines() if line.startswith("| full")
            or line.startswith("| compact")]  # fmt: skip
    full, compact = (int(row[5].split()[0]) for row in rows)
    assert 0 < compact < full / 2
