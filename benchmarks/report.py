"""The report every mode prints and writes into docs/benchmarks.md: header, verdicts."""

from __future__ import annotations

import datetime
import os
import platform
import re
import shlex
import sys

from benchmarks.measure import REPO, Result

DOCS = REPO / "docs" / "benchmarks.md"
DOCS_INTRO = """\
# Benchmarks

Figures from the `benchmarks/` package; `uv run benchmarks MODE --write-docs` rewrites that mode's
section in place (each mode is one module in `benchmarks/modes/`). Principles:

- **Side by side, in one run.** acp-server is always measured with a baseline (for startup, the
  official ACP Python SDK's echo example agent at the SDK version in `uv.lock`, fetched at run
  time into `~/.cache/acp-server-bench/` and never committed here). Absolute figures belong to
  one machine; the ratio of two agents measured moments apart on it is what carries over.
- **Baselines are commits.** A mode that measures another build of acp-server takes
  `--baseline COMMIT` and builds it itself (a worktree of that commit with its own venv,
  removed after the run), so anyone can rerun a figure.
- **Alternated.** Runs go A B A B ... after one uncounted warm-up of each (bytecode compilation,
  cold caches), so background load hits both agents alike rather than one whole series.
- **Medians, not means.** Medians (with p90 and min) shrug off the outliers machine noise makes.
- **Machine noise is real.** Re-run before reading anything into a small difference.
- **Never timed assertions in tests.** Timings depend on the machine and its load, so tests stay
  deterministic; targets are checked here, printed as PASS/FAIL, and the script exits 0 anyway.
"""


def run_context() -> Result:
    """Date, machine (with its load average when the results are gathered, right after the
    measuring: the 5- and 15-minute figures cover the run) and command line, recorded with
    every result."""
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },
        "command": ("uv run " if os.environ.get("UV") else "")
        + shlex.join(["benchmarks", *sys.argv[1:]]),
    }


def update_docs_section(title: str, body: str) -> None:
    """Replace `## title` (up to the next `## ` heading) in docs/benchmarks.md, or append it."""
    text = DOCS.read_text() if DOCS.exists() else DOCS_INTRO
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}[ \t]*\n.*?(?=^## |\Z)", re.M | re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    DOCS.write_text(text)
    print(f"updated {DOCS.relative_to(REPO)} (## {title})", file=sys.stderr)


def render_header(results: Result, method: str) -> list[str]:
    """The bullet list every section starts with: date, machine, versions, command, method."""
    machine = results["machine"]
    return [
        f"- Date: {results['date']}",
        f"- Machine: {machine['platform']}, {machine['cpu_count']} CPUs,"
        f" Python {machine['python']}"
        + (
            ", load average (1, 5, 15 min) at the end: "
            + ", ".join(f"{x:.2f}" for x in machine["load_average"])
            if "load_average" in machine
            else ""
        ),
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()),
        f"- Command: `{results['command']}`",
        f"- {method}",
    ]


def render_verdicts(results: Result) -> list[str]:
    lines = ["", "Targets:", ""]
    for v in results["verdicts"]:
        lines.append(f"- {'PASS' if v['pass'] else 'FAIL'}: {v['target']} (got {v['value']:.2f})")
    return lines


def machine_load_note(results: Result) -> str:
    """The load average at a run's start and end, for modes that compare early and late turns
    of one run (a change of load during the run moves that ratio)."""
    before, after = results["load"]
    return (
        f"\nMachine load (1-minute load average) at the start and the end: {before:.1f}, "
        f"{after:.1f} on {results['machine']['cpu_count']} CPUs. The ratio compares one run's "
        "early and late turns, so a change of load during the run moves it; re-run to check."
    )


def exit_warnings(exit_codes: dict[str, int]) -> list[str]:
    return [
        f"- WARNING: {name}: exit code {code} after stdin closed"
        for name, code in exit_codes.items()
        if code != 0
    ]
