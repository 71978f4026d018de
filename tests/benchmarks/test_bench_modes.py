"""`uv run benchmarks` finds its modes: every module in benchmarks/modes/ is a subcommand.

Only the command line is exercised here; the measurements themselves are timings, which tests
never assert (docs/benchmarks.md holds them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.cli import main

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=60
    )


def test_every_mode_module_is_a_subcommand_with_its_own_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In this process: a process per mode, each importing every mode, took 45 s of a loaded
    # suite; the command line as a whole is run as a process below.
    modules = sorted(p.stem for p in (BENCH / "modes").glob("*.py") if p.stem != "__init__")
    assert len(modules) >= 7
    for module in modules:
        monkeypatch.setattr(sys, "argv", ["benchmarks", module.replace("_", "-"), "--help"])
        with pytest.raises(SystemExit) as exited:
            main()
        shown = capsys.readouterr()
        assert exited.value.code == 0, shown.err
        assert "--write-docs" in shown.out and "--json" in shown.out


def test_an_unknown_mode_is_refused_naming_the_known_ones() -> None:
    result = bench("no-such-mode")
    assert result.returncode == 2
    assert "invalid choice: 'no-such-mode'" in result.stderr
    assert "tool-cancel" in result.stderr
