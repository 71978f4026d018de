"""history: prompt rate over a long session, the last prompts against the first. Its baseline is
the build of the commit `--baseline` names (benchmarks/other_build.py), to show the growth a
change removed beside the current figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from benchmarks.client import AgentProcess, text_prompt
from benchmarks.measure import (
    Result,
    Target,
    evaluate,
    require_positive,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import (
    exit_warnings,
    machine_load_note,
    render_header,
    render_verdicts,
    run_context,
)

HISTORY_TARGETS: tuple[Target, ...] = (
    (
        "acp-server last-window prompt rate >= 0.5x its first-window rate",
        "subject_last_vs_first",
        ">=",
        0.5,
    ),
)


def history_runs(agents: list[tuple[str, list[str]]], cwd: str, prompts: int) -> list[Result]:
    """One fresh process and session per agent; `prompts` one-word prompts each, alternated
    across the agents prompt by prompt (so a burst of machine load hits them alike), each
    timed from writing it to reading its response."""
    with ExitStack() as stack:
        procs = [stack.enter_context(AgentProcess(name, argv)) for name, argv in agents]
        sessions = []
        for agent in procs:
            agent.initialize()
            sessions.append(agent.new_session(cwd))
        times: list[list[float]] = [[] for _ in procs]
        stop_reasons: list[set[str]] = [set() for _ in procs]
        for i in range(prompts):
            for index, agent in enumerate(procs):
                params = text_prompt(sessions[index], f"w{i}")
                request_id, t0 = agent.request("session/prompt", params)
                t1, result = agent.wait_response(request_id)
                times[index].append(t1 - t0)
                stop_reasons[index].add(str((result or {}).get("stopReason")))
        rss = [agent.rss_mib() for agent in procs]
        exits = [agent.close() for agent in procs]
    return [
        {
            "times": times[i],
            "stop_reasons": sorted(stop_reasons[i]),
            "rss_mib": rss[i],
            "exit": exits[i],
        }
        for i in range(len(procs))
    ]


def add_history_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompts", type=int, default=2000, help="prompts per session (2000)")
    parser.add_argument(
        "--window", type=int, default=300, help="prompts in the first and last window (300)"
    )
    add_baseline_args(parser)


def mode_history(args: argparse.Namespace) -> Result:
    require_positive(prompts=args.prompts, window=args.window)
    if args.window * 2 > args.prompts:
        sys.exit("bench: --window must be at most half of --prompts")
    agents = [(name, [str(exe)]) for name, exe in agents_to_measure(args).items()]
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        argvs = [
            (name, [*exe, "--model", "echo", "--data-dir", str(Path(tmp) / f"data{i}")])
            for i, (name, exe) in enumerate(agents)
        ]
        for (name, _), run in zip(argvs, history_runs(argvs, tmp, args.prompts), strict=True):
            times = run.pop("times")
            first, last = times[: args.window], times[-args.window :]
            rows.append(
                {
                    "agent": name,
                    **run,
                    "total_s": sum(times),
                    "first_rate": len(first) / sum(first),
                    "last_rate": len(last) / sum(last),
                    "first_median_ms": statistics.median(first) * 1000,
                    "last_median_ms": statistics.median(last) * 1000,
                }
            )
    for row in rows:
        row["last_vs_first"] = row["last_rate"] / row["first_rate"]
    metrics = {"subject_last_vs_first": rows[0]["last_vs_first"]}
    return {
        **run_context(),
        "versions": versions(),
        "prompts": args.prompts,
        "window": args.window,
        "rows": rows,
        "load": [load_before, os.getloadavg()[0]],
        "verdicts": evaluate(HISTORY_TARGETS, metrics),
    }


def render_history(results: Result) -> str:
    window = results["window"]
    method = (
        f"One fresh `acp-server --model echo` process and one session per agent, both alive "
        f"at once; {results['prompts']} one-word prompts (`w0`, `w1`, ...) each, alternated "
        "prompt by prompt across the agents (A B A B ...), each timed from right before "
        "writing `session/prompt` to reading its response (the "
        "echo model streams the word back, so every turn does the same work and only the "
        f"history grows). rate = prompts / their summed times, over the first and the last "
        f"{window} prompts. Same raw-pipe client as the other modes (no SDK client)."
    )
    lines = render_header(results, method)
    lines += [
        "",
        f"| agent | first {window}: prompts/s | last {window}: prompts/s | last / first "
        f"| first {window}: median ms | last {window}: median ms | total s | RSS at end MiB "
        "| stop reasons |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in results["rows"]:
        lines.append(
            f"| {row['agent']} | {row['first_rate']:.1f} | {row['last_rate']:.1f} "
            f"| {row['last_vs_first']:.2f} | {row['first_median_ms']:.2f} "
            f"| {row['last_median_ms']:.2f} | {row['total_s']:.1f} | {row['rss_mib']:.1f} "
            f"| {', '.join(row['stop_reasons'])} |"
        )
    lines.append(machine_load_note(results))
    lines += render_verdicts(results)
    lines += exit_warnings({row["agent"]: row["exit"] for row in results["rows"]})
    return "\n".join(lines)


MODE = Mode(
    "history",
    "History scaling",
    "prompt rate over a long session: the last prompts against the first",
    add_history_args,
    mode_history,
    render_history,
)
