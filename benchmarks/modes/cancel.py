"""cancel: session/cancel -> cancelled prompt response latency while streaming. The baseline is
benchmarks/programs/sdk_streaming_agent.py, a streaming agent written on the same SDK.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from benchmarks.client import AgentProcess
from benchmarks.measure import (
    PROGRAMS,
    SUBJECT,
    Result,
    Target,
    evaluate,
    require_positive,
    subject_exe,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.report import exit_warnings, render_header, render_verdicts, run_context
from benchmarks.sampling import (
    WARMUP,
    alternate,
    cancel_stats,
    spread_cells,
    stop_reason_warnings,
)
from benchmarks.streaming_cancel import CANCEL_AFTER_UPDATES, CANCEL_SCRIPT, cancel_sample

CANCEL_TARGETS: tuple[Target, ...] = (
    ("acp-server cancel p99 <= 1 ms", "subject_p99_ms", "<=", 1.0),
)


def add_cancel_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--samples", type=int, default=200, help="timed cancels per agent (default 200)"
    )


def mode_cancel(args: argparse.Namespace) -> Result:
    require_positive(samples=args.samples)
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp, ExitStack() as stack:
        script = Path(tmp) / "cancel-script.json"
        script.write_text(json.dumps(CANCEL_SCRIPT))
        argvs = {
            SUBJECT: [str(subject_exe()), "--model", f"script:{script}"],
            "baseline (SDK streaming agent)": [
                sys.executable,
                str(PROGRAMS / "sdk_streaming_agent.py"),
            ],
        }
        agents = {name: stack.enter_context(AgentProcess(name, a)) for name, a in argvs.items()}
        samplers = {}
        for name, agent in agents.items():
            agent.initialize()
            samplers[name] = partial(cancel_sample, agent, agent.new_session(tmp))
        samples = alternate(samplers, args.samples)
        exit_codes = {name: agent.close() for name, agent in agents.items()}
    stats = {}
    for name, runs in samples.items():
        after = [r["chunks_after_cancel"] for r in runs]
        stats[name] = {
            **cancel_stats(runs),
            "chunks_after_cancel_median": statistics.median(after),
            "chunks_after_cancel_max": max(after),
        }
    metrics = {"subject_p99_ms": stats[SUBJECT]["p99_ms"]}
    return {
        "mode": "cancel",
        **run_context(),
        "samples_per_agent": args.samples,
        "versions": versions(),
        "agents": stats,
        "exit_codes": exit_codes,
        "verdicts": evaluate(CANCEL_TARGETS, metrics),
        "raw": samples,
    }


def render_cancel(results: Result) -> str:
    agents = results["agents"]
    n = results["samples_per_agent"]
    method = (
        f"{n} timed cancels per agent, alternated A B A B ... after {WARMUP} uncounted"
        " ones each; one long-lived process and one session per agent. Per sample: send"
        f" `session/prompt`, read until {CANCEL_AFTER_UPDATES} `agent_message_chunk` updates of"
        " it arrived, then time from right before writing the `session/cancel` notification to"
        " reading the prompt's response (`stopReason` must be `cancelled`). acp-server runs"
        f" `--model script:PATH` with the response `{json.dumps(CANCEL_SCRIPT['responses'][0])}`"
        " (a chunk every 1 ms); the baseline is `benchmarks/programs/sdk_streaming_agent.py`,"
        ' an `acp.Agent` on the official SDK (`run_agent`) that streams a "tick " chunk every'
        " 1 ms until its per-session `asyncio.Event`, set by `cancel`, ends the turn. Same"
        " raw-pipe client for both (JSON lines on stdin; stdout read and timestamped line by"
        " line in one thread; no SDK client)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | p50 ms | p90 ms | p99 ms | max ms | min ms | cancelled | chunks read"
        " after the cancel, median / max |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in agents.items():
        lines.append(
            f"| {name} | {spread_cells(s)} | {s['cancelled']}/{n}"
            f" | {s['chunks_after_cancel_median']:g} / {s['chunks_after_cancel_max']} |"
        )
    lines += render_verdicts(results)
    lines += stop_reason_warnings(agents, n)
    lines += exit_warnings(results["exit_codes"])
    return "\n".join(lines) + "\n"


MODE = Mode(
    "cancel",
    "Cancel latency",
    "session/cancel -> cancelled prompt response latency while streaming",
    add_cancel_args,
    mode_cancel,
    render_cancel,
)
