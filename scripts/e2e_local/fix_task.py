"""The multi-step fix: a small repository whose test fails because of a one-character bug in
stats.py; the model must find it, fix it and run the tests. Two prompts: unguided (only the
symptom) and guided (names the file and the function). Each run records the tool calls, the stop
reason, whether the tests pass afterwards (run here, not by the model), and the wall time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
from acp import text_block

from e2e_local.environment import info, step
from e2e_local.servers import output_limits

STATS = '''"""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    return sum(values) / len(values)


def variance(values):
    """The population variance of a non-empty list of numbers."""
    m = mean(values)
    return sum((v - m) ** 2 for v in values) / len(values)


def median(values):
    """The median of a non-empty list of numbers."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) * 2
'''
# The bug: `* 2` where `/ 2` belongs (one character).
TEST = """from stats import mean, median, variance


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_variance():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == 4


def test_median():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5
"""
UNGUIDED = "The test in test_stats.py fails. Find the bug and fix it, then run the tests."
GUIDED = (
    "The test in test_stats.py fails because of a bug in the function median in stats.py. "
    "Read stats.py, fix median with edit_file, then run `python -m pytest -q` with bash."
)
FIX_TIMEOUT_S = 900.0
LIMIT_POLL_S = 1.0


def make_repository(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "stats.py").write_text(STATS)
    (root / "test_stats.py").write_text(TEST)
    return root


def tests_pass(root: Path) -> tuple[bool, str]:
    """Run the repository's tests here (never trusting the model's word). Bytecode goes to a
    fresh directory: a `.pyc` in the repository records its source's mtime in whole seconds and
    its size, so one written by an earlier run in the same second as a one-character fix (the
    same size) would be taken for the fixed source."""
    with tempfile.TemporaryDirectory(prefix="e2e-pyc-") as pycache:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=root, capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "PYTHONPYCACHEPREFIX": pycache},
        )  # fmt: skip
    last = (result.stdout.strip().splitlines() or [""])[-1]
    return result.returncode == 0, last


@dataclass
class FixRun:
    variant: str
    stop_reason: str
    seconds: float
    tool_calls: list[dict[str, Any]]
    output_limits: list[Any]
    tests_pass: bool
    tests_summary: str
    stats_changed: bool
    test_file_changed: bool
    answer: str


async def watch_limits(port: int, limits: dict[int, Any]) -> None:
    """Every second, the output limit (`n_predict`) of each request llama-server is processing:
    the evidence that none runs unbounded (-1)."""
    while True:
        limits.update(await anyio.to_thread.run_sync(output_limits, port))
        await anyio.sleep(LIMIT_POLL_S)


async def fix_run(
    conn: Any, client: Any, root: Path, variant: str, port: int, limit_s: float = FIX_TIMEOUT_S
) -> FixRun:
    """One run of the fix in a fresh copy of the repository."""
    prompt = GUIDED if variant == "guided" else UNGUIDED
    step(f"fix ({variant}): {prompt!r} in {root}")
    session = await conn.new_session(cwd=str(root), mcp_servers=[])
    first = len(client.updates)
    started = time.monotonic()
    stop_reason = "timeout"
    limits: dict[int, Any] = {}
    async with anyio.create_task_group() as watch:
        watch.start_soon(watch_limits, port, limits)
        with anyio.move_on_after(limit_s) as scope:
            response = await conn.prompt(session_id=session.session_id, prompt=[text_block(prompt)])
            stop_reason = str(response.stop_reason)
        if scope.cancelled_caught:
            await conn.cancel(session_id=session.session_id)
        watch.cancel_scope.cancel()
    seconds = time.monotonic() - started
    calls = [
        {
            "title": call.get("title"),
            "kind": call.get("kind"),
            "status": call.get("status"),
            "input": call.get("raw_input"),
            "result": call["content"].strip()[:300],
            "first_status": call.get("first_status"),
            "seen_ms_after_last_chunk": call.get("seen_ms_after_last_chunk"),
            "name_to_frame_ms": call.get("name_to_frame_ms"),
            "while_written": call.get("while_written"),
        }
        for call in client.tool_calls(first).values()
    ]
    passed, summary = tests_pass(root)
    answer = client.final_answer(first).strip()
    run = FixRun(
        variant, stop_reason, round(seconds, 1), calls, sorted(limits.values()), passed, summary,
        (root / "stats.py").read_text() != STATS, (root / "test_stats.py").read_text() != TEST,
        answer[-600:],
    )  # fmt: skip
    for number, call in enumerate(calls, 1):
        info(f"tool call {number}: {call['title']!r} {call['status']} input={call['input']!r}")
    info(
        f"stopReason {stop_reason} after {seconds:.0f} s, {len(calls)} tool call(s); "
        f"tests afterwards: {'PASS' if passed else 'FAIL'} ({summary})"
    )
    info(f"output limits (n_predict) of the {len(limits)} request(s) seen: {run.output_limits}")
    return run


def as_json(runs: list[FixRun]) -> list[dict[str, Any]]:
    return [asdict(run) for run in runs]
