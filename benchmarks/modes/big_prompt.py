"""big-prompt: `session/load` of a session that holds one prompt of 50 MB (replay must cost
time in proportion to the data: under 2 s)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.client import AgentProcess, text_prompt
from benchmarks.measure import (
    EXIT_TIMEOUT_S,
    INITIALIZE,
    Result,
    Target,
    evaluate,
    require_positive,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import render_header, render_verdicts, run_context


def big_prompt_once(exe: Path, megabytes: int, data_dir: str, cwd: str) -> Result:
    """One process writes a session with one prompt of `megabytes` MB; a fresh one loads it:
    seconds from writing `session/load` to reading its response (updates are read whole but
    not decoded, so the client's JSON parser is not what is timed)."""
    script = Path(data_dir) / "big-prompt.json"
    script.write_text(json.dumps({"responses": [[{"text": "ok"}]]}))
    argv = [str(exe), "--model", f"script:{script}", "--data-dir", data_dir]
    text = "word " * (megabytes * 1_000_000 // 5)
    with AgentProcess(str(exe), argv, response_timeout=120.0) as agent:
        agent.initialize()
        session = agent.new_session(cwd)
        t0 = time.perf_counter()
        agent.call("session/prompt", text_prompt(session, text))
        prompt_s = time.perf_counter() - t0
    del text
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    proc.stdout.readline()
    load = {"cwd": cwd, "mcpServers": [], "sessionId": session}
    request = {"jsonrpc": "2.0", "id": 1, "method": "session/load", "params": load}
    t0 = time.perf_counter()
    proc.stdin.write(json.dumps(request).encode() + b"\n")
    proc.stdin.flush()
    replayed = 0
    while True:
        line = proc.stdout.readline()
        if not line or not line.startswith(b'{"jsonrpc":"2.0","method":'):
            break  # the only request in flight is the load: anything else is its response
        replayed += len(line)
    load_s = time.perf_counter() - t0
    proc.stdin.close()
    exit_code = proc.wait(EXIT_TIMEOUT_S)
    proc.stdout.close()
    return {
        "prompt_s": prompt_s,
        "load_s": load_s,
        "replayed_mb": replayed / 1e6,
        "exit": exit_code,
    }


def add_big_prompt_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mb", type=int, default=50, help="prompt size in MB (default 50)")
    parser.add_argument("--runs", type=int, default=3, help="runs per agent; median (default 3)")
    add_baseline_args(parser)


def mode_big_prompt(args: argparse.Namespace) -> Result:
    require_positive(mb=args.mb, runs=args.runs)
    runs: dict[str, list[Result]] = {name: [] for name in agents_to_measure(args)}
    for _ in range(args.runs):  # alternated: A B A B ...
        for name, exe in agents_to_measure(args).items():
            with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
                runs[name].append(big_prompt_once(exe, args.mb, tmp, tmp))
    stats = {
        name: {
            "median_load_s": statistics.median(r["load_s"] for r in agent_runs),
            "median_prompt_s": statistics.median(r["prompt_s"] for r in agent_runs),
            "replayed_mb": agent_runs[0]["replayed_mb"],
        }
        for name, agent_runs in runs.items()
    }
    subject = next(iter(stats.values()))
    targets: tuple[Target, ...] = (
        (f"a {args.mb} MB prompt loads in <= 2 s (median)", "load", "<=", 2.0),
    )
    return {
        "mode": "big-prompt",
        **run_context(),
        "mb": args.mb,
        "runs_per_agent": args.runs,
        "versions": versions(),
        "agents": stats,
        "verdicts": evaluate(targets, {"load": subject["median_load_s"]}),
        "raw": runs,
    }


def render_big_prompt(results: Result) -> str:
    mb = results["mb"]
    method = (
        f"{results['runs_per_agent']} runs per agent, alternated. Per run: one process"
        f" (`--model script:`, answers `ok`) gets a session with one prompt of {mb} MB"
        " (`word word ...`, one text block) and exits; a fresh process then loads the session."
        " load = from writing `session/load` to reading its response; the replayed updates are"
        " read whole but not decoded. The baseline is acp-server at the commit before titles"
        " stopped splitting the whole prompt (`--baseline`)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | median load s | replayed MB | median prompt s (for context) |",
        "|---|---:|---:|---:|",
    ]
    for name, r in results["agents"].items():
        lines.append(
            f"| {name} | {r['median_load_s']:.2f} | {r['replayed_mb']:.1f}"
            f" | {r['median_prompt_s']:.2f} |"
        )
    return "\n".join([*lines, *render_verdicts(results)]) + "\n"


MODE = Mode(
    "big-prompt",
    "Big prompt replay",
    "session/load of a session holding one 50 MB prompt",
    add_big_prompt_args,
    mode_big_prompt,
    render_big_prompt,
)
