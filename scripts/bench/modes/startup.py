"""startup: time to the initialize response, and idle RSS. The baseline is the ACP Python SDK's
examples/echo_agent.py at the SDK version installed in this venv (bench.baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench.baseline import add_cache_dir_arg, fetch_echo_agent
from bench.measure import (
    EXIT_TIMEOUT_S,
    IDLE_SETTLE_S,
    INITIALIZE,
    RESPONSE_TIMEOUT_S,
    SUBJECT,
    Result,
    Target,
    evaluate,
    percentile,
    require_positive,
    subject_exe,
    versions,
    vm_rss_mib,
)
from bench.mode import Mode
from bench.report import render_header, render_verdicts, run_context

STARTUP_TARGETS: tuple[Target, ...] = (
    ("acp-server median startup <= 200 ms", "subject_median_ms", "<=", 200.0),
    ("startup ratio acp-server/baseline <= 0.35", "ratio", "<=", 0.35),
    ("acp-server median idle RSS <= 35 MiB", "subject_rss_mib", "<=", 35.0),
)


def startup_once(argv: list[str]) -> Result:
    """One spawn: time to the initialize response, idle RSS, exit code."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    watchdog = threading.Timer(RESPONSE_TIMEOUT_S, proc.kill)
    watchdog.start()
    try:
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv[0]}: stdout closed before the initialize response")
            message = json.loads(line)
            if message.get("id") == 0:
                break
        elapsed_ms = (time.perf_counter() - t0) * 1000
    finally:
        watchdog.cancel()
    ok = (message.get("result") or {}).get("protocolVersion") == 1
    time.sleep(IDLE_SETTLE_S)
    rss_mib = vm_rss_mib(proc.pid)
    exe = os.readlink(f"/proc/{proc.pid}/exe")
    proc.stdin.close()
    try:
        returncode = proc.wait(EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        returncode = proc.wait()
    proc.stdout.close()
    return {"ms": elapsed_ms, "ok": ok, "rss_mib": rss_mib, "exe": exe, "exit": returncode}


def summarize(runs: list[Result]) -> Result:
    ms = [r["ms"] for r in runs]
    return {
        "median_ms": statistics.median(ms),
        "p90_ms": percentile(ms, 90),
        "min_ms": min(ms),
        "median_rss_mib": statistics.median(r["rss_mib"] for r in runs),
        "all_ok": all(r["ok"] for r in runs),
        "exit_codes": sorted({r["exit"] for r in runs}),
        "process_exe": sorted({r["exe"] for r in runs}),
    }


def top_imports(module: str, count: int = 10) -> list[tuple[float, str]]:
    """The `count` largest cumulative import times (ms) of `python -X importtime -c 'import m'`."""
    argv = [sys.executable, "-X", "importtime", "-c", f"import {module}"]
    stderr = subprocess.run(argv, capture_output=True, text=True, check=True).stderr
    rows = re.findall(r"^import time:\s+\d+ \|\s+(\d+) \|\s*(\S+)", stderr, re.M)
    return sorted(((int(us) / 1000, name) for us, name in rows), reverse=True)[:count]


def add_startup_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=20, help="timed runs per agent (default 20)")
    add_cache_dir_arg(parser)
    parser.add_argument(
        "--importtime", action="store_true", help="add the import-time breakdown even on PASS"
    )


def mode_startup(args: argparse.Namespace) -> Result:
    require_positive(runs=args.runs)
    agents = {
        SUBJECT: [str(subject_exe())],
        "baseline (SDK echo_agent.py)": [sys.executable, str(fetch_echo_agent(args.cache_dir))],
    }
    runs: dict[str, list[Result]] = {name: [] for name in agents}
    for argv in agents.values():  # warm-up, not counted
        startup_once(argv)
    for _ in range(args.runs):  # alternated: A B A B ...
        for name, argv in agents.items():
            runs[name].append(startup_once(argv))
    stats = {name: summarize(agent_runs) for name, agent_runs in runs.items()}
    subject_stats, baseline_stats = stats.values()
    metrics = {
        "subject_median_ms": subject_stats["median_ms"],
        "ratio": subject_stats["median_ms"] / baseline_stats["median_ms"],
        "subject_rss_mib": subject_stats["median_rss_mib"],
    }
    verdicts = evaluate(STARTUP_TARGETS, metrics)
    results = {
        "mode": "startup",
        **run_context(),
        "runs_per_agent": args.runs,
        "versions": versions(),
        "agents": stats,
        "ratio": metrics["ratio"],
        "verdicts": verdicts,
        "raw": runs,
    }
    if args.importtime or not all(v["pass"] for v in verdicts):
        results["import_top10"] = top_imports("acp_server.server")
    return results


def render_startup(results: Result) -> str:
    agents = results["agents"]
    method = (
        f"{results['runs_per_agent']} timed runs per agent, alternated, after one warm-up each;"
        f" time = spawn until the complete `initialize` response line; idle RSS = VmRSS of the"
        f" agent process {IDLE_SETTLE_S} s after the response (process measured: "
        + ", ".join(sorted({Path(e).name for s in agents.values() for e in s["process_exe"]}))
        + "; the console script execs the interpreter directly, no wrapper process)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | median ms | p90 ms | min ms | median idle RSS MiB | ratio vs baseline |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    baseline_median = list(agents.values())[-1]["median_ms"]
    for name, s in agents.items():
        lines.append(
            f"| {name} | {s['median_ms']:.1f} | {s['p90_ms']:.1f} | {s['min_ms']:.1f}"
            f" | {s['median_rss_mib']:.1f} | {s['median_ms'] / baseline_median:.2f} |"
        )
    lines += render_verdicts(results)
    for name, s in agents.items():
        if not s["all_ok"]:
            lines.append(f"- WARNING: {name}: a response lacked result.protocolVersion == 1")
        if s["exit_codes"] != [0]:
            lines.append(f"- WARNING: {name}: exit codes {s['exit_codes']} after stdin closed")
    if "import_top10" in results:
        lines += [
            "",
            "Top 10 cumulative imports of `python -X importtime -c 'import acp_server.server'`"
            " (one run, indicative; imports done after the handshake, e.g. in a worker thread,"
            " are not listed but do count in the idle RSS):",
            "",
            "| cumulative ms | module |",
            "|---:|---|",
        ]
        for ms, module in results["import_top10"]:
            lines.append(f"| {ms:.1f} | `{module.strip()}` |")
    return "\n".join(lines) + "\n"


MODE = Mode(
    "startup",
    "Startup",
    "time to the initialize response, and idle RSS",
    add_startup_args,
    mode_startup,
    render_startup,
)
