"""keeper: what a command pays so that it dies with an agent killed by SIGKILL, the per-command
keeper of an older build (`--baseline COMMIT`) against this tree's one watchdog per agent.

Three series of `bash -c true` through `run_process`, each batch in a fresh process
(`programs/command_starts.py`) that imports `acp_server` from its source tree: the baseline
without protection, the baseline with its keeper, and this tree (its watchdog). Batches
alternate A B C A B C. Then a full `bash` tool call through each build's real agent, the two
alternated. The figures of docs/rfc/implemented/architecture/2026-12-06-background-work.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from benchmarks.client import AgentProcess, text_prompt
from benchmarks.measure import PROGRAMS, SUBJECT, Result, require_positive, subject_exe, versions
from benchmarks.mode import Mode
from benchmarks.other_build import add_baseline_args, baseline_label
from benchmarks.report import render_header, run_context
from benchmarks.sampling import alternate, spread, spread_cells

PROGRAM = PROGRAMS / "command_starts.py"
SOURCE_TREE = Path(__file__).resolve().parents[2]
BATCH_TIMEOUT_S = 600.0
TOOL_SCRIPT = {
    "responses": [
        [{"tool_call": {"name": "bash", "arguments": {"command": "true"}}}],
        [{"text": "done"}],
    ]
}
TOOL_ENV = {"ACP_SERVER_SANDBOXED": "1"}  # lets root run --mode bypass: no permission asked


def batch(tree: Path, starts: int, protection: str) -> Result:
    """One fresh process's starts (see programs/command_starts.py)."""
    completed = subprocess.run(
        [sys.executable, str(PROGRAM), str(tree), str(starts), protection],
        capture_output=True,
        text=True,
        timeout=BATCH_TIMEOUT_S,
        check=True,
    )
    result: Result = json.loads(completed.stdout.splitlines()[-1])
    if Path(result["loaded_from"]) != tree.resolve():
        raise RuntimeError(f"{tree}: acp_server was imported from {result['loaded_from']}")
    return result


def tool_call(agent: AgentProcess, session_id: str) -> Result:
    """One prompt whose turn runs `bash -c true` and answers: write -> response, in ms."""
    request_id, written = agent.request("session/prompt", text_prompt(session_id, "go"))
    answered, result = agent.wait_response(request_id)
    if (result or {}).get("stopReason") != "end_turn":
        raise RuntimeError(f"{agent.name}: the turn ended {result!r}")
    return {"ms": (answered - written) * 1000}


def add_args(parser: argparse.ArgumentParser) -> None:
    add_baseline_args(parser, required=True)
    parser.add_argument("--batches", type=int, default=8, help="processes per series (8)")
    parser.add_argument("--starts", type=int, default=15, help="timed starts per batch (15)")
    parser.add_argument("--calls", type=int, default=40, help="timed tool calls per agent (40)")


def run(args: argparse.Namespace) -> Result:
    require_positive(batches=args.batches, starts=args.starts, calls=args.calls)
    baseline = baseline_label(args)
    series = {
        f"{baseline}, no protection": (args.baseline_build.tree, "none"),
        f"{baseline}, a keeper per command": (args.baseline_build.tree, "keeper"),
        f"{SUBJECT}, one watchdog per agent": (SOURCE_TREE, "watchdog"),
    }
    samplers = {
        name: partial(batch, tree, args.starts, protection)
        for name, (tree, protection) in series.items()
    }
    batches = alternate(samplers, args.batches, warmup=1)
    starts = {
        name: {
            **spread([ms for b in runs for ms in b["ms"]]),
            "first_ms": statistics.median(b["first_ms"] for b in runs),
            "children_cpu_ms_per_start": statistics.median(
                b["children_cpu_ms_per_start"] for b in runs
            ),
            "watchdog_cpu_ms": _median_or_none([b["watchdog_cpu_ms"] for b in runs]),
            "protector": _protector(runs),
        }
        for name, runs in batches.items()
    }
    return {
        **run_context(),
        "versions": versions(),
        "batches": args.batches,
        "starts": args.starts,
        "calls": args.calls,
        "series": starts,
        "tool_calls": tool_calls(args, baseline),
        "verdicts": [],
    }


def tool_calls(args: argparse.Namespace, baseline: str) -> Result:
    """The two builds' agents, one `bash -c true` tool call per prompt, alternated; each
    agent's first call (ours starts its watchdog) kept apart."""
    agents = {
        f"{SUBJECT}, one watchdog per agent": subject_exe(),
        f"{baseline}, a keeper per command": args.baseline_build.exe,
    }
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps(TOOL_SCRIPT))
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        running: dict[str, tuple[AgentProcess, str]] = {}
        firsts: dict[str, float] = {}
        try:
            for name, exe in agents.items():
                argv = [str(exe), "--model", f"script:{script}", "--mode", "bypass"]
                agent = AgentProcess(name, argv, env=TOOL_ENV)
                running[name] = agent, ""
                agent.initialize()
                session = agent.new_session(str(workspace))
                running[name] = agent, session
                time.sleep(0.5)  # the agent settles before its first command
                firsts[name] = tool_call(agent, session)["ms"]
            samplers = {
                name: partial(tool_call, agent, session)
                for name, (agent, session) in running.items()
            }
            samples = alternate(samplers, args.calls)
        finally:
            for agent, _ in running.values():
                agent.close()
    return {
        name: {**spread([s["ms"] for s in runs]), "first_ms": firsts[name]}
        for name, runs in samples.items()
    }


def _median_or_none(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _protector(runs: list[Result]) -> Result | None:
    memories = [b["protector"] for b in runs if b["protector"] is not None]
    if not memories:
        return None
    return {key: statistics.median(m[key] for m in memories) for key in ("rss_mib", "uss_mib")}


def render(results: Result) -> str:
    method = (
        f"`bash -c true` through `run_process` (spawned, exited, joined), from the call to its"
        f" result: {results['batches']} fresh processes per series after one uncounted, each"
        " importing `acp_server` from its source tree (`benchmarks/programs/command_starts.py`),"
        f" alternated by series; in each, one first start and {results['starts']} timed ones."
        " CPU: the reaped children's user + system time per timed start (bash, and the keeper"
        " when there is one); the watchdog's own CPU time over a whole batch, its start"
        " included. Memory: of the process that protects a running `sleep 30` 0.5 s after it"
        " started (a keeper per running command; one watchdog per agent), VmRSS and USS (its"
        " private pages). Then a full tool call: each build's `acp-server --mode bypass` with"
        " a scripted model whose turn calls `bash` with `true` and answers, from writing"
        f" `session/prompt` to reading its answer, {results['calls']} per agent, alternated,"
        " after each agent's first call (kept apart) and 5 uncounted ones. Medians of the"
        " batches for the first start, CPU and memory. No target: these are the cost of the"
        " promise that nothing outlives an agent killed with SIGKILL."
    )
    lines = [
        *render_header(results, method),
        "",
        "| series | p50 ms | p90 ms | p99 ms | max ms | min ms | first start ms"
        " | children CPU ms per start | watchdog CPU ms | protector RSS MiB | protector USS MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in results["series"].items():
        memory = s["protector"] or {}
        lines.append(
            f"| {name} | {spread_cells(s)} | {s['first_ms']:.2f}"
            f" | {s['children_cpu_ms_per_start']:.2f} | {_cell(s['watchdog_cpu_ms'])}"
            f" | {_cell(memory.get('rss_mib'))} | {_cell(memory.get('uss_mib'))} |"
        )
    lines += [
        "",
        "A full `bash` tool call (ms):",
        "",
        "| agent | p50 ms | p90 ms | p99 ms | max ms | min ms | its first call ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in results["tool_calls"].items():
        lines.append(f"| {name} | {spread_cells(s)} | {s['first_ms']:.2f} |")
    return "\n".join(lines)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


MODE = Mode(
    "keeper",
    "The keeper and the watchdog: what a command pays so that it dies with the agent",
    "a command's start under a per-command keeper (a baseline build) and under one watchdog"
    " per agent (this tree)",
    add_args,
    run,
    render,
)
