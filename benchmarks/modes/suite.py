"""suite: the README's test command (`uv run pytest`), its wall time and CPU time, in this
checkout and in the build of a baseline commit (`--baseline COMMIT`, benchmarks/other_build.py),
run alternately in one invocation.

CPU time is the user + system time of the whole process tree (`getrusage(RUSAGE_CHILDREN)`
around each run: pytest, its workers and every agent they start and reap). On a shared
machine the wall time moves with the load; the CPU time and the ratio of the two trees' wall
times, measured moments apart, are what carry over.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.measure import REPO, SUBJECT, Result, Target, evaluate, require_positive, versions
from benchmarks.mode import Mode
from benchmarks.other_build import (
    add_baseline_args,
    baseline_label,
    environment_outside_this_venv,
    uv_executable,
)
from benchmarks.report import render_header, render_verdicts, run_context

COMMAND = ("run", "pytest")
"""After `uv`: the README's test command, exactly."""
TARGETS: tuple[Target, ...] = (
    ("this checkout: wall time <= 240 s (issue 34; on a quiet 2-CPU machine)", "wall_s", "<=", 240),
)
_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def add_suite_args(parser: argparse.ArgumentParser) -> None:
    add_baseline_args(parser, required=True)
    parser.add_argument(
        "--runs", type=int, default=1, help="runs of the suite per tree, alternated (default 1)"
    )


def summary_counts(output: str) -> dict[str, int]:
    """The counts of pytest's last summary line (`3306 passed, 5 skipped in 509.16s`)."""
    lines = [line for line in output.splitlines() if re.search(r"\bin [\d.]+s\b", line)]
    if not lines:
        return {}
    counts: dict[str, int] = {}
    for number, word in _COUNTS.findall(lines[-1]):
        counts["errors" if word.startswith("error") else word] = int(number)
    return counts


def one_run(tree: Path, log: Path) -> Result:
    """`uv run pytest` in `tree` with a temporary directory of its own (as .ci/run gives it);
    its output goes to `log`."""
    with tempfile.TemporaryDirectory(prefix="acp-bench-suite-") as tmp:
        env = {**environment_outside_this_venv(), "TMPDIR": tmp}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        with log.open("w") as out:
            status = subprocess.run(
                [uv_executable(), *COMMAND],
                cwd=tree,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            ).returncode
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = log.read_text(errors="replace")
    return {
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "exit": status,
        "counts": summary_counts(output),
    }


def mode_suite(args: argparse.Namespace) -> Result:
    require_positive(runs=args.runs)
    baseline = baseline_label(args)
    trees = {baseline: args.baseline_build.tree, SUBJECT: REPO}
    runs: dict[str, list[Result]] = {name: [] for name in trees}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="acp-bench-logs-") as logs:
        for i in range(args.runs):  # alternated: baseline, this checkout, baseline, ...
            for t, (name, tree) in enumerate(trees.items()):
                log = Path(logs) / f"tree{t}-run{i}.log"
                result = one_run(tree, log)
                runs[name].append(result)
                print(
                    f"{name}: {result['wall_s']:.1f} s wall, {result['cpu_s']:.1f} s CPU,"
                    f" exit {result['exit']}, {result['counts']}",
                    file=sys.stderr,
                )
                if result["exit"] != 0:
                    tail = log.read_text(errors="replace").splitlines()[-30:]
                    print("\n".join(tail), file=sys.stderr)
    rows = [
        {
            "tree": name,
            "commit": args.baseline_build.commit if name == baseline else head_commit(),
            "runs": len(results),
            "wall_s": statistics.median(r["wall_s"] for r in results),
            "cpu_s": statistics.median(r["cpu_s"] for r in results),
            "exits": [r["exit"] for r in results],
            "counts": results[-1]["counts"],
        }
        for name, results in runs.items()
    ]
    subject = rows[1]
    metrics = {
        "wall_s": subject["wall_s"],
        "wall_ratio": subject["wall_s"] / rows[0]["wall_s"],
        "cpu_ratio": subject["cpu_s"] / rows[0]["cpu_s"],
    }
    return {
        "mode": "suite",
        **run_context(),
        "versions": versions(),
        "rows": rows,
        "runs": runs,
        "metrics": metrics,
        "load": [load_before, os.getloadavg()[0]],
        "verdicts": evaluate(TARGETS, metrics),
    }


def head_commit() -> str:
    """This checkout's commit, with `+changes` when its tracked files differ from it."""
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=REPO).returncode != 0
    return commit + ("+changes" if dirty else "")


def tests_run(counts: dict[str, int]) -> int:
    """Tests that ran (passed, failed or errored), at least 1."""
    return max(1, counts.get("passed", 0) + counts.get("failed", 0) + counts.get("errors", 0))


def per_test(results: Result, key: str) -> float:
    """This checkout's figure per test run against the baseline's."""
    baseline, subject = results["rows"]
    ratio = subject[key] / tests_run(subject["counts"])
    return float(ratio / (baseline[key] / tests_run(baseline["counts"])))


def render_suite(results: Result) -> str:
    lines = render_header(
        results,
        f"`uv run pytest` (the README's command) in each tree, {results['rows'][0]['runs']}"
        " run(s) each, alternated, baseline first; each run with a temporary directory of its"
        " own (TMPDIR, as .ci/run does), its own venv, nothing else changed in the environment."
        " The baseline is a fresh worktree of its commit with a venv synced from that commit's"
        " uv.lock; this checkout runs as it is. Wall = from starting uv to its exit; CPU = user"
        " + system time of the whole process tree (RUSAGE_CHILDREN: pytest, its workers, every"
        " agent and tool process they reaped). Medians when more than one run.",
    )
    lines += [
        "",
        "| tree | commit | wall s | CPU s | CPU / wall | wall ms / test | CPU ms / test"
        " | passed | skipped | failed | exit |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in results["rows"]:
        counts = row["counts"]
        commit = row["commit"][:7] + ("+changes" if row["commit"].endswith("+changes") else "")
        tests = tests_run(counts)
        lines.append(
            f"| {row['tree']} | {commit}"
            f" | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {row['cpu_s'] / row['wall_s']:.2f}"
            f" | {row['wall_s'] * 1000 / tests:.0f} | {row['cpu_s'] * 1000 / tests:.0f}"
            f" | {counts.get('passed', 0)} | {counts.get('skipped', 0)}"
            f" | {counts.get('failed', 0) + counts.get('errors', 0)}"
            f" | {', '.join(str(e) for e in row['exits'])} |"
        )
    metrics = results["metrics"]
    lines += [
        "",
        f"This checkout against the baseline: wall {metrics['wall_ratio']:.2f}x,"
        f" CPU {metrics['cpu_ratio']:.2f}x; per test run (the two trees need not have the same"
        f" tests): wall {per_test(results, 'wall_s'):.2f}x, CPU {per_test(results, 'cpu_s'):.2f}x.",
    ]
    lines += render_verdicts(results)
    before, after = results["load"]
    lines.append(
        f"\nMachine load (1-minute load average) at the start and the end: {before:.1f},"
        f" {after:.1f} on {results['machine']['cpu_count']} CPUs. Other work on the machine"
        " moves the wall times (and a little the CPU times); the trees ran alternately so that"
        " it hits both alike."
    )
    return "\n".join(lines)


MODE = Mode(
    "suite",
    "Test suite",
    "the test command's wall and CPU time, beside a baseline commit's build",
    add_suite_args,
    mode_suite,
    render_suite,
)
