"""streaming: agent_message_chunk notifications per second delivered to a reading client. The
baseline is the ACP Python SDK's examples/echo_agent.py (benchmarks.baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import signal
import statistics
import sys
import sysconfig
import tempfile
from contextlib import ExitStack
from pathlib import Path

from benchmarks.baseline import add_cache_dir_arg, fetch_echo_agent
from benchmarks.client import AgentError, AgentProcess, text_prompt
from benchmarks.measure import (
    PROGRAMS,
    REPO,
    SUBJECT,
    SUBJECT_V2,
    Result,
    Target,
    evaluate,
    require_positive,
    subject_exe,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.report import exit_warnings, render_header, render_verdicts, run_context

STREAMING_TARGETS: tuple[Target, ...] = (
    ("acp-server chunk rate >= 8x baseline", "ratio", ">=", 8.0),
    ("ACP v2 chunk rate within 10% of v1's (ratio >= 0.90)", "v2_ratio", ">=", 0.90),
)
PROFILE_TOP = 15


def streaming_once(agent: AgentProcess, cwd: str, texts: list[str]) -> Result:
    """One prompt in a fresh session: chunks read between writing it and reading the turn's
    end (v1: its response; v2: the idle state)."""
    session_id = agent.new_session(cwd)
    chunks_before = agent.chunks
    request_id, t_prompt = agent.request("session/prompt", text_prompt(session_id, *texts))
    t_end, stop_reason = agent.turn_end(request_id, session_id)
    seconds = t_end - t_prompt
    chunks = agent.chunks - chunks_before
    return {"s": seconds, "chunks": chunks, "rate": chunks / seconds, "stop_reason": stop_reason}


def function_label(func: tuple[str, int, str]) -> str:
    """A pstats function key; its file relative to the repo, site-packages or the stdlib."""
    filename, line, name = func
    if filename == "~":  # a builtin
        return name
    path = Path(filename)
    paths = sysconfig.get_paths()
    for root in (Path(paths["purelib"]), Path(paths["stdlib"]), REPO):  # the venv is in REPO
        if path.is_relative_to(root):
            filename = str(path.relative_to(root))
            break
    return f"{filename}:{line}({name})"


def profile_streaming(script: Path, cwd: str, chunks: int, prompts: int = 2) -> Result:
    """acp-server under cProfile (programs/profile_agent.py) for `prompts` streaming
    prompts after an unprofiled warm-up one: the top functions by own time, and how often each
    ran per chunk streamed."""
    with tempfile.TemporaryDirectory(prefix="acp-bench-prof-") as tmp:
        out = Path(tmp) / "acp-server.prof"
        argv = [sys.executable, str(PROGRAMS / "profile_agent.py"), str(out)]
        argv += ["acp_server.cli", "--model", f"script:{script}"]
        with AgentProcess(f"{SUBJECT} (cProfile)", argv) as agent:
            agent.initialize()
            streaming_once(agent, cwd, ["go"])  # warm-up, not profiled
            os.kill(agent.proc.pid, signal.SIGUSR1)  # handled before it answers anything else
            for _ in range(prompts):
                streaming_once(agent, cwd, ["go"])
            if agent.close() != 0:
                raise AgentError(f"{agent.name}: exit code {agent.exit_code}")
        stats = pstats.Stats(str(out))
    streamed = prompts * chunks
    entries = stats.stats  # type: ignore[attr-defined]  # {func: (cc, n, tt, ct, callers)}
    total = sum(tt for _, _, tt, _, _ in entries.values())
    top = sorted(entries.items(), key=lambda item: item[1][2], reverse=True)[:PROFILE_TOP]
    return {
        "prompts": prompts,
        "chunks": streamed,
        "total_s": total,
        "top": [
            {
                "function": function_label(func),
                "tottime_s": tt,
                "share": tt / total,
                "calls_per_chunk": ncalls / streamed,
            }
            for func, (_, ncalls, tt, _, _) in top
        ],
    }


def add_streaming_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chunks", type=int, default=20000, help="chunks per prompt (default 20000)"
    )
    parser.add_argument(
        "--reps", type=int, default=5, help="timed prompts per agent; median (default 5)"
    )
    add_cache_dir_arg(parser)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="add acp-server's cProfile breakdown even on PASS",
    )


def mode_streaming(args: argparse.Namespace) -> Result:
    require_positive(chunks=args.chunks, reps=args.reps)
    runs: dict[str, list[Result]] = {}
    exit_codes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp, ExitStack() as stack:
        script = Path(tmp) / "streaming-script.json"
        script.write_text(json.dumps({"responses": [[{"text": "x", "repeat": args.chunks}]]}))
        # (argv, the prompt's text blocks): acp-server is scripted to stream the chunks for a
        # one-block prompt; the SDK echo agent sends one chunk per block of the prompt.
        subject = [str(subject_exe()), "--model", f"script:{script}"]
        setups = {
            SUBJECT: (subject, ["go"]),
            SUBJECT_V2: (subject, ["go"]),  # the same build, as a v2 client sees it
            "baseline (SDK echo_agent.py)": (
                [sys.executable, str(fetch_echo_agent(args.cache_dir))],
                ["x"] * args.chunks,
            ),
        }
        agents = {
            name: stack.enter_context(
                AgentProcess(name, argv, version=2 if name == SUBJECT_V2 else 1)
            )
            for name, (argv, _) in setups.items()
        }
        for name, agent in agents.items():
            agent.initialize()
            runs[name] = []
        for name, agent in agents.items():  # warm-up, not counted
            streaming_once(agent, tmp, setups[name][1])
        for _ in range(args.reps):  # alternated: A B A B ...
            for name, agent in agents.items():
                runs[name].append(streaming_once(agent, tmp, setups[name][1]))
        exit_codes = {name: agent.close() for name, agent in agents.items()}
        rate = {
            name: statistics.median(r["rate"] for r in agent_runs)
            for name, agent_runs in runs.items()
        }
        ratio = rate[SUBJECT] / list(rate.values())[-1]
        v2_ratio = rate[SUBJECT_V2] / rate[SUBJECT]
        verdicts = evaluate(STREAMING_TARGETS, {"ratio": ratio, "v2_ratio": v2_ratio})
        profile = None
        if args.profile or not all(v["pass"] for v in verdicts):
            profile = profile_streaming(script, tmp, args.chunks)
    stats = {}
    for name, agent_runs in runs.items():
        rates = [r["rate"] for r in agent_runs]
        stats[name] = {
            "prompt_blocks": len(setups[name][1]),
            "median_rate": statistics.median(rates),
            "min_rate": min(rates),
            "max_rate": max(rates),
            "median_s": statistics.median(r["s"] for r in agent_runs),
            "chunks": sorted({r["chunks"] for r in agent_runs}),
            "stop_reasons": sorted({str(r["stop_reason"]) for r in agent_runs}),
        }
    results = {
        "mode": "streaming",
        **run_context(),
        "chunks_per_prompt": args.chunks,
        "reps_per_agent": args.reps,
        "versions": versions(),
        "agents": stats,
        "ratio": ratio,
        "v2_ratio": v2_ratio,
        "exit_codes": exit_codes,
        "verdicts": verdicts,
        "raw": runs,
    }
    if profile is not None:
        results["profile"] = profile
    return results


def render_streaming(results: Result) -> str:
    agents, n = results["agents"], results["chunks_per_prompt"]
    method = (
        f"{results['reps_per_agent']} timed prompts per agent, alternated, after one uncounted"
        " each; one long-lived process per agent, a fresh session per prompt. rate ="
        " `agent_message_chunk` notifications read / seconds from right before writing"
        " `session/prompt` to reading its response (for the ACP v2 series, the same build"
        " initialized with `protocolVersion: 2`: to reading the session's `idle` state, v2's end"
        " of a turn; its prompt is answered earlier, at insertion); median over the prompts."
        " acp-server runs"
        f' `--model script:PATH` with the response `[{{"text": "x", "repeat": {n}}}]` and gets a'
        " one-block prompt; the baseline, the SDK's `examples/echo_agent.py`, sends one chunk per"
        f' content block, so it gets a prompt of {n} text blocks `"x"` (its time therefore also'
        " covers receiving and validating that larger prompt). Same raw-pipe client for both"
        " (JSON lines on stdin; stdout read, timestamped and decoded line by line in one thread;"
        " no SDK client)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | prompt blocks | chunks per prompt | median chunks/s | min chunks/s"
        " | max chunks/s | median s per prompt | rate vs baseline |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    baseline_rate = list(agents.values())[-1]["median_rate"]
    for name, s in agents.items():
        chunks = ", ".join(str(c) for c in s["chunks"])
        lines.append(
            f"| {name} | {s['prompt_blocks']} | {chunks} | {s['median_rate']:,.0f}"
            f" | {s['min_rate']:,.0f} | {s['max_rate']:,.0f} | {s['median_s']:.3f}"
            f" | {s['median_rate'] / baseline_rate:.2f} |"
        )
    lines.append(f"\nACP v2 against v1, same build, same run: x{results['v2_ratio']:.2f}.")
    lines += render_verdicts(results)
    for name, s in agents.items():
        if s["chunks"] != [n]:
            lines.append(f"- WARNING: {name}: chunks per prompt {s['chunks']}, expected {n}")
        if s["stop_reasons"] != ["end_turn"]:
            lines.append(f"- WARNING: {name}: stop reasons {s['stop_reasons']}")
    lines += exit_warnings(results["exit_codes"])
    if "profile" in results:
        prof = results["profile"]
        lines += [
            "",
            "Where acp-server's time goes: cProfile of acp-server"
            " (`benchmarks/programs/profile_agent.py`, profiling switched on by SIGUSR1 after a"
            f" warm-up prompt) over {prof['prompts']} prompts driven as above ({prof['chunks']}"
            f" chunks, {prof['total_s']:.2f} s of own time profiled). Top {len(prof['top'])}"
            " functions by own time; the profiler inflates per-call costs, so shares are"
            " indicative, while calls per chunk are exact (cProfile counts each resumption of a"
            " coroutine as a call; `_run_once` = event-loop iterations, `posix.write` = write"
            " syscalls):",
            "",
            "| own time s | share | calls per chunk | function |",
            "|---:|---:|---:|---|",
        ]
        for row in prof["top"]:
            lines.append(
                f"| {row['tottime_s']:.3f} | {row['share']:.1%} | {row['calls_per_chunk']:.2f}"
                f" | `{row['function']}` |"
            )
    return "\n".join(lines) + "\n"


MODE = Mode(
    "streaming",
    "Streaming throughput",
    "agent_message_chunk notifications per second delivered to a reading client",
    add_streaming_args,
    mode_streaming,
    render_streaming,
)
