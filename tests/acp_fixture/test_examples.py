"""Every example under examples/*/ (each NAME.jsonl next to its NAME.golden.jsonl) is run against
the real server and compared with its golden transcript; `uv run acp-fixture run FILE
--update` rewrites one after an intended change.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

from acp_fixture import parse_fixture, run_fixture
from acp_fixture.cli import golden_path

REPO = Path(__file__).resolve().parents[2]
FIXTURE_COMMAND = [str(Path(sys.executable).parent / "acp-fixture")]  # the console script
PIPE_EXAMPLE = REPO / "examples" / "pipe"
"""A plain file to pipe into acp-server, not a fixture (tests/e2e/test_pipe_example.py)."""
EXAMPLES = sorted(
    path
    for path in REPO.glob("examples/*/*.jsonl")
    if not path.name.endswith(".golden.jsonl") and path.parent != PIPE_EXAMPLE
)

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


def test_the_tour_is_an_example() -> None:
    assert REPO / "examples" / "tour" / "tour.jsonl" in EXAMPLES


@pytest.mark.parametrize("fixture", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_matches_its_golden_transcript(fixture: Path) -> None:
    golden = golden_path(fixture)
    assert golden.exists(), f"{fixture} has no golden file {golden.name}"
    transcript = run_fixture(parse_fixture(fixture))
    expected = golden.read_text(encoding="utf-8")
    if transcript != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            transcript.splitlines(keepends=True),
            fromfile=str(golden),
            tofile="this run",
        )
        rel = fixture.relative_to(REPO)
        pytest.fail(
            "".join(diff) + f"\nIf the change is intended: uv run acp-fixture run {rel} --update"
        )
