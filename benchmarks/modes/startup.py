"""startup: from spawn, the time to the `initialize` answer and to ready (the `session/new`
answer: from then on the user can type), idle RSS once ready, and what the first prompt after
ready costs more than the second. Side by side with the ACP Python SDK's examples/echo_agent.py
at the SDK version installed in this venv (benchmarks.baseline) and with the floor,
benchmarks/programs/floor_agent.py (a minimal Python process answering with `json`).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.baseline import add_cache_dir_arg, fetch_echo_agent
from benchmarks.client import AgentProcess, text_prompt
from benchmarks.measure import (
    PROGRAMS,
    SUBJECT,
    Result,
    Target,
    evaluate,
    percentile,
    require_positive,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import render_header, render_verdicts, run_context

SDK = "SDK echo_agent.py"
FLOOR = "floor (json only)"
TYPING_S = 2.0
"""The pause between ready and the first prompt, standing for the user typing it; idle RSS is
read at its end."""

STARTUP_TARGETS: tuple[Target, ...] = (
    ("ready ratio acp-server/SDK agent <= 0.35", "ready_ratio", "<=", 0.35),
    ("ready ratio acp-server/floor <= 5 (stretch goal)", "ready_floor_ratio", "<=", 5.0),
    ("acp-server median idle RSS once ready <= 35 MiB", "subject_rss_mib", "<=", 35.0),
    (
        "acp-server median first prompt minus second <= 20 ms (echo model)",
        "subject_first_prompt_extra_ms",
        "<=",
        20.0,
    ),
)


def startup_once(name: str, argv: list[str], cwd: str, prompts: bool) -> Result:
    """One spawn: ms to the initialize answer and to the session/new answer (sent as soon as
    initialize is answered); then, after TYPING_S, idle RSS and two prompts' times."""
    t0 = time.perf_counter()
    with AgentProcess(name, argv) as agent:
        init_id, _ = agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        t_init, init = agent.wait_response(init_id)
        new_id, _ = agent.request("session/new", {"cwd": cwd, "mcpServers": []})
        t_ready, new = agent.wait_response(new_id)
        run: Result = {
            "initialize_ms": (t_init - t0) * 1000,
            "ready_ms": (t_ready - t0) * 1000,
            "ok": (init or {}).get("protocolVersion") == 1 and "sessionId" in (new or {}),
            "exe": os.readlink(f"/proc/{agent.proc.pid}/exe"),
        }
        time.sleep(TYPING_S)
        run["rss_mib"] = agent.rss_mib()
        if prompts:
            for key in ("first_prompt_ms", "second_prompt_ms"):
                prompt_id, t_sent = agent.request(
                    "session/prompt", text_prompt(new["sessionId"], "hello there")
                )
                t_answered, _ = agent.wait_response(prompt_id)
                run[key] = (t_answered - t_sent) * 1000
        run["exit"] = agent.close()
    return run


def summarize(runs: list[Result]) -> Result:
    def median(key: str) -> float:
        return float(statistics.median(r[key] for r in runs))

    summary: Result = {
        "initialize_median_ms": median("initialize_ms"),
        "ready_median_ms": median("ready_ms"),
        "ready_p90_ms": percentile([r["ready_ms"] for r in runs], 90),
        "ready_min_ms": min(r["ready_ms"] for r in runs),
        "median_rss_mib": median("rss_mib"),
        "all_ok": all(r["ok"] for r in runs),
        "exit_codes": sorted({r["exit"] for r in runs}),
        "process_exe": sorted({r["exe"] for r in runs}),
    }
    if "first_prompt_ms" in runs[0]:
        summary["first_prompt_median_ms"] = median("first_prompt_ms")
        summary["second_prompt_median_ms"] = median("second_prompt_ms")
        summary["first_prompt_extra_median_ms"] = statistics.median(
            r["first_prompt_ms"] - r["second_prompt_ms"] for r in runs
        )
    return summary


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
    add_baseline_args(parser)


def mode_startup(args: argparse.Namespace) -> Result:
    require_positive(runs=args.runs)
    builds = agents_to_measure(args)  # this acp-server, and another build if --baseline
    agents = {name: [str(exe), "--model", "echo"] for name, exe in builds.items()}
    agents[SDK] = [sys.executable, str(fetch_echo_agent(args.cache_dir))]
    agents[FLOOR] = [sys.executable, str(PROGRAMS / "floor_agent.py")]
    prompts = {name: name != FLOOR for name in agents}
    runs: dict[str, list[Result]] = {name: [] for name in agents}
    load_before = os.getloadavg()
    # Installed agents start from bytecode caches (written at install or by their first run).
    # With PYTHONDONTWRITEBYTECODE set, every spawn would compile its modules from source
    # instead, which measured 2.5-3.5x the import time of acp-server: the caches are allowed,
    # so the warm-up run of each agent writes what it lacks (or refreshes what is stale).
    no_bytecode_env = os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as cwd:
        data = {"XDG_DATA_HOME": str(Path(cwd) / "data")}
        os.environ.update(data)  # acp-server's journals go to the temporary directory
        for name, argv in agents.items():  # warm-up, not counted
            startup_once(name, argv, cwd, prompts[name])
        for _ in range(args.runs):  # alternated: A B C A B C ...
            for name, argv in agents.items():
                runs[name].append(startup_once(name, argv, cwd, prompts[name]))
    stats = {name: summarize(agent_runs) for name, agent_runs in runs.items()}
    subject, sdk, floor = stats[SUBJECT], stats[SDK], stats[FLOOR]
    metrics = {
        "ready_ratio": subject["ready_median_ms"] / sdk["ready_median_ms"],
        "ready_floor_ratio": subject["ready_median_ms"] / floor["ready_median_ms"],
        "subject_rss_mib": subject["median_rss_mib"],
        "subject_first_prompt_extra_ms": subject["first_prompt_extra_median_ms"],
    }
    results = {
        "mode": "startup",
        **run_context(),
        "load": [load_before, os.getloadavg()],
        "unset_pythondontwritebytecode": no_bytecode_env,
        "runs_per_agent": args.runs,
        "versions": versions(),
        "agents": stats,
        "metrics": metrics,
        "verdicts": evaluate(STARTUP_TARGETS, metrics),
        "raw": runs,
    }
    if args.importtime or not all(v["pass"] for v in results["verdicts"]):
        results["import_top10"] = top_imports("acp_server.server")
    return results


def render_startup(results: Result) -> str:
    agents = results["agents"]
    before, after = results["load"]
    method = (
        f"{results['runs_per_agent']} timed runs per agent, alternated ("
        + ", ".join(agents)
        + "), after one warm-up each. From spawn: `initialize` = until its answer is read;"
        " ready = until the answer to `session/new`, sent as soon as `initialize` is answered"
        " (from then on the user can type). Every agent runs from bytecode caches, as an"
        " installed one does: PYTHONDONTWRITEBYTECODE is not passed to them"
        + (
            " (it was set in the bench's environment)"
            if results.get("unset_pythondontwritebytecode")
            else ""
        )
        + ", so the warm-up run writes the caches a module lacks or has stale."
        " acp-server runs `--model echo`. Then a pause of"
        f" {TYPING_S:.0f} s (the user typing), idle RSS (VmRSS of the agent process: "
        + ", ".join(sorted({Path(e).name for s in agents.values() for e in s["process_exe"]}))
        + "; the console script execs the interpreter directly), and two prompts `hello"
        " there`, each timed from writing it to reading its answer: the first's extra cost is"
        " what the user would wait for work left after ready. The floor answers only the"
        " handshake. Load average (1, 5, 15 min) at the start: "
        + ", ".join(f"{x:.2f}" for x in before)
        + "; at the end: "
        + ", ".join(f"{x:.2f}" for x in after)
        + f" ({results['machine']['cpu_count']} CPUs)."
    )
    sdk_ready = agents[SDK]["ready_median_ms"]
    lines = [
        *render_header(results, method),
        "",
        "| agent | initialize ms (median) | ready ms (median) | ready p90 | ready min"
        " | ready vs SDK | idle RSS MiB | 1st prompt ms | 2nd prompt ms | 1st - 2nd ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in agents.items():
        prompt_cells = "| - | - | -"
        if "first_prompt_median_ms" in s:
            prompt_cells = (
                f"| {s['first_prompt_median_ms']:.1f} | {s['second_prompt_median_ms']:.1f}"
                f" | {s['first_prompt_extra_median_ms']:.1f}"
            )
        lines.append(
            f"| {name} | {s['initialize_median_ms']:.1f} | {s['ready_median_ms']:.1f}"
            f" | {s['ready_p90_ms']:.1f} | {s['ready_min_ms']:.1f}"
            f" | {s['ready_median_ms'] / sdk_ready:.2f} | {s['median_rss_mib']:.1f}"
            f" {prompt_cells} |"
        )
    lines += render_verdicts(results)
    for name, s in agents.items():
        if not s["all_ok"]:
            lines.append(f"- WARNING: {name}: an answer lacked protocolVersion 1 or a sessionId")
        if s["exit_codes"] != [0]:
            lines.append(f"- WARNING: {name}: exit codes {s['exit_codes']} after stdin closed")
    if "import_top10" in results:
        lines += [
            "",
            "Top 10 cumulative imports of `python -X importtime -c 'import acp_server.server'`"
            " (one run, indicative; the runtime is imported after ready, in a worker thread, so"
            " it is not listed but does count in the idle RSS):",
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
    "time to the initialize answer and to ready (session/new answered), idle RSS, first prompt",
    add_startup_args,
    mode_startup,
    render_startup,
)
