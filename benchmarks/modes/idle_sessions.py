"""idle-sessions: RSS added by many idle sessions; the SDK's examples/echo_agent.py is measured
beside it as context only, no target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from benchmarks.baseline import add_cache_dir_arg, fetch_echo_agent
from benchmarks.client import AgentProcess, text_prompt
from benchmarks.measure import (
    IDLE_SETTLE_S,
    SUBJECT,
    Result,
    Target,
    evaluate,
    require_positive,
    subject_exe,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.report import render_header, render_verdicts, run_context

IDLE_SESSIONS_MB_PER_1000 = 50.0


def idle_sessions_once(name: str, argv: list[str], count: int, cwd: str) -> Result:
    """Fresh process: RSS once ready (one session, the runtime loaded), RSS after `count`
    more session/new, then one prompt."""
    with AgentProcess(name, argv) as agent:
        agent.initialize()
        agent.new_session(cwd)
        # acp-server loads its runtime after the first session/new answer; session/list waits
        # for that, so the first reading holds what every process holds once ready.
        if name == SUBJECT:
            agent.call("session/list", {})
        time.sleep(IDLE_SETTLE_S)
        rss_before = agent.rss_mib()
        t0 = time.perf_counter()
        session_ids = [agent.new_session(cwd) for _ in range(count)]
        create_s = time.perf_counter() - t0
        time.sleep(IDLE_SETTLE_S)
        rss_after = agent.rss_mib()
        probe = f"still answering after {count} sessions"
        agent.texts = []
        result = agent.call("session/prompt", text_prompt(session_ids[count // 2], probe))
        echoed = "".join(agent.texts)
        exit_code = agent.close()
    return {
        "rss_before_mib": rss_before,
        "rss_after_mib": rss_after,
        "added_mib": rss_after - rss_before,
        "create_s": create_s,
        "unique_ids": len(set(session_ids)) == count,
        "prompt_ok": (result or {}).get("stopReason") == "end_turn" and echoed == probe,
        "exit": exit_code,
    }


def add_idle_sessions_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sessions", type=int, default=1000, help="sessions to create (default 1000)"
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="fresh processes per agent; median (default 3)"
    )
    add_cache_dir_arg(parser)


def mode_idle_sessions(args: argparse.Namespace) -> Result:
    require_positive(sessions=args.sessions, runs=args.runs)
    argvs = {
        SUBJECT: [str(subject_exe()), "--model", "echo"],
        "SDK echo_agent.py (context, no target)": [
            sys.executable,
            str(fetch_echo_agent(args.cache_dir)),
        ],
    }
    runs: dict[str, list[Result]] = {name: [] for name in argvs}
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        for _ in range(args.runs):  # alternated: A B A B ...
            for name, argv in argvs.items():
                runs[name].append(idle_sessions_once(name, argv, args.sessions, tmp))
    stats = {}
    for name, agent_runs in runs.items():
        median_added = statistics.median(r["added_mib"] for r in agent_runs)
        stats[name] = {
            "median_rss_before_mib": statistics.median(r["rss_before_mib"] for r in agent_runs),
            "median_rss_after_mib": statistics.median(r["rss_after_mib"] for r in agent_runs),
            "median_added_mib": median_added,
            "max_added_mib": max(r["added_mib"] for r in agent_runs),
            "kib_per_session": median_added * 1024 / args.sessions,
            "median_create_s": statistics.median(r["create_s"] for r in agent_runs),
            "all_ok": all(r["unique_ids"] and r["prompt_ok"] for r in agent_runs),
            "exit_codes": sorted({r["exit"] for r in agent_runs}),
        }
    limit_mb = IDLE_SESSIONS_MB_PER_1000 * args.sessions / 1000
    label = f"acp-server: {args.sessions} idle sessions add <= {limit_mb:g} MB (median)"
    added_mb = stats[SUBJECT]["median_added_mib"] * 2**20 / 1e6
    targets: tuple[Target, ...] = ((label, "subject_added_mb", "<=", limit_mb),)
    return {
        "mode": "idle-sessions",
        **run_context(),
        "sessions": args.sessions,
        "runs_per_agent": args.runs,
        "versions": versions(),
        "agents": stats,
        "verdicts": evaluate(targets, {"subject_added_mb": added_mb}),
        "raw": runs,
    }


def render_idle_sessions(results: Result) -> str:
    agents, n = results["agents"], results["sessions"]
    method = (
        f"{results['runs_per_agent']} fresh processes per agent, alternated. Per process:"
        " `initialize` and one `session/new` (for acp-server, then a `session/list`, which waits"
        f" for the runtime it loads after that first answer), {IDLE_SETTLE_S} s pause, VmRSS;"
        f" {n} more `session/new` one after another"
        f" (each awaited), {IDLE_SETTLE_S} s pause, VmRSS; added = the difference (median over"
        " the processes). Then one `session/prompt` in the middle session must stream its text"
        " back and end with `end_turn`, to show the process still works. acp-server runs"
        " `--model echo`; the SDK's `examples/echo_agent.py` is measured the same way for"
        " context only (it keeps no per-session state: a session id is all it creates). RSS in"
        " MiB (VmRSS is in KiB); the target is in MB (10^6 bytes)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | RSS once ready MiB | RSS after sessions MiB | added MiB (max)"
        " | KiB per session | session/new x N, s | checks |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, s in agents.items():
        lines.append(
            f"| {name} | {s['median_rss_before_mib']:.1f} | {s['median_rss_after_mib']:.1f}"
            f" | {s['median_added_mib']:.2f} ({s['max_added_mib']:.2f})"
            f" | {s['kib_per_session']:.1f} | {s['median_create_s']:.2f}"
            f" | {'ok' if s['all_ok'] else 'FAILED'} |"
        )
    lines += render_verdicts(results)
    for name, s in agents.items():
        if not s["all_ok"]:
            lines.append(
                f"- WARNING: {name}: duplicate session ids, or the prompt afterwards did not"
                " echo its text with end_turn"
            )
        if s["exit_codes"] != [0]:
            lines.append(f"- WARNING: {name}: exit codes {s['exit_codes']} after stdin closed")
    return "\n".join(lines) + "\n"


MODE = Mode(
    "idle-sessions",
    "Idle sessions",
    "RSS added by many idle sessions",
    add_idle_sessions_args,
    mode_idle_sessions,
    render_idle_sessions,
)
