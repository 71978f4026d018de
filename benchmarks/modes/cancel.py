"""cancel: session/cancel -> cancelled prompt response latency while streaming. The baseline is
benchmarks/programs/sdk_streaming_agent.py, a streaming agent written on the same SDK.

acp-server answers a cancelled prompt only once its `turn/end` record is fsynced (the journal
RFC), which the SDK agent does not do; a third series, alternated with the two agents, times
that fsync alone: one journal-sized line appended and fsynced, in this process, in the same
directory as acp-server's journals (on the filesystem of the default data directory, not a
possible tmpfs /tmp). It is the floor of acp-server's figure on this disk.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from benchmarks.client import AgentProcess
from benchmarks.measure import (
    PROGRAMS,
    SUBJECT,
    SUBJECT_V2,
    Result,
    Target,
    evaluate,
    require_positive,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import exit_warnings, render_header, render_verdicts, run_context
from benchmarks.sampling import (
    WARMUP,
    alternate,
    cancel_stats,
    spread,
    spread_cells,
    stop_reason_warnings,
)
from benchmarks.streaming_cancel import CANCEL_AFTER_UPDATES, CANCEL_SCRIPT, cancel_sample

CANCEL_TARGETS: tuple[Target, ...] = (
    ("acp-server cancel p99 <= 1 ms", "subject_p99_ms", "<=", 1.0),
    ("ACP v2 cancel p50 within 10% of v1's (ratio <= 1.10)", "v2_p50_ratio", "<=", 1.10),
)
BASELINE = "baseline (SDK streaming agent)"
FLOOR = "floor: append + fsync one line, same disk"
# A `turn/end` record of the cancel's turn, as long as the journal's (about 110 bytes).
TURN_END_LINE = (
    b'{"type":"turn/end","turn_id":"turn_0123456789abcdef","outcome":{"kind":"aborted"},'
    b'"at":"2026-12-02T00:00:00.000000Z"}\n'
)


def data_root() -> Path:
    """The directory that holds acp-server's default data directory (created if need be)."""
    from acp_server.paths import data_dir

    root = data_dir().parent
    root.mkdir(parents=True, exist_ok=True)
    return root


def data_root_filesystem() -> str:
    """`TYPE at MOUNT POINT` of the filesystem holding data_root(), from /proc/mounts."""
    root = str(data_root().resolve())
    best = ("?", "")
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "unknown"
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1]
        inside = root == point or root.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[1]):
            best = (fields[2], point)
    return f"{best[0]} at {best[1]}"


def fsync_sample(fd: int) -> Result:
    """One record appended and fsynced, timed: what a durable turn end costs at least."""
    t0 = time.perf_counter()
    os.write(fd, TURN_END_LINE)
    os.fsync(fd)
    return {"ms": (time.perf_counter() - t0) * 1000}


def add_cancel_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--samples", type=int, default=200, help="timed cancels per agent (default 200)"
    )
    add_baseline_args(parser)  # another acp-server build, e.g. the code before a change


def mode_cancel(args: argparse.Namespace) -> Result:
    require_positive(samples=args.samples)
    with (
        tempfile.TemporaryDirectory(prefix="acp-bench-cancel-", dir=data_root()) as tmp,
        ExitStack() as stack,
    ):
        script = Path(tmp) / "cancel-script.json"
        script.write_text(json.dumps(CANCEL_SCRIPT))
        data = Path(tmp) / "data"
        argvs = {  # each build its own data directory: one journal writer per directory
            name: [str(exe), "--model", f"script:{script}", "--data-dir", str(data / str(i))]
            for i, (name, exe) in enumerate(agents_to_measure(args).items())
        }
        # The same build as an ACP v2 client sees it: the turn ends with its idle state.
        v2_argv = [*argvs[SUBJECT][:-1], str(data / "v2")]
        argvs = {SUBJECT: argvs[SUBJECT], SUBJECT_V2: v2_argv, **argvs}
        argvs[BASELINE] = [sys.executable, str(PROGRAMS / "sdk_streaming_agent.py")]
        agents = {
            name: stack.enter_context(AgentProcess(name, a, version=2 if name == SUBJECT_V2 else 1))
            for name, a in argvs.items()
        }
        samplers = {}
        for name, agent in agents.items():
            agent.initialize()
            samplers[name] = partial(cancel_sample, agent, agent.new_session(tmp))
        data.mkdir(parents=True, exist_ok=True)  # holds each build's data directory
        fd = os.open(data / "fsync-floor.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        stack.callback(os.close, fd)
        samplers[FLOOR] = partial(fsync_sample, fd)
        samples = alternate(samplers, args.samples)
        exit_codes = {name: agent.close() for name, agent in agents.items()}
    floor = samples.pop(FLOOR)
    stats = {}
    for name, runs in samples.items():
        after = [r["chunks_after_cancel"] for r in runs]
        stats[name] = {
            **cancel_stats(runs),
            "chunks_after_cancel_median": statistics.median(after),
            "chunks_after_cancel_max": max(after),
        }
    metrics = {
        "subject_p99_ms": stats[SUBJECT]["p99_ms"],
        "v2_p50_ratio": stats[SUBJECT_V2]["p50_ms"] / stats[SUBJECT]["p50_ms"],
        "v2_p99_ratio": stats[SUBJECT_V2]["p99_ms"] / stats[SUBJECT]["p99_ms"],
    }
    return {
        "mode": "cancel",
        **run_context(),
        "samples_per_agent": args.samples,
        "versions": versions(),
        "agents": stats,
        "fsync_floor": spread([r["ms"] for r in floor]),
        "data_dir_filesystem": data_root_filesystem(),
        "exit_codes": exit_codes,
        "v2_vs_v1": {"p50_ratio": metrics["v2_p50_ratio"], "p99_ratio": metrics["v2_p99_ratio"]},
        "verdicts": evaluate(CANCEL_TARGETS, metrics),
        "raw": {**samples, FLOOR: floor},
    }


def render_cancel(results: Result) -> str:
    agents = results["agents"]
    n = results["samples_per_agent"]
    method = (
        f"{n} timed cancels per agent, alternated A B A B ... after {WARMUP} uncounted"
        " ones each; one long-lived process and one session per agent. Per sample: send"
        f" `session/prompt`, read until {CANCEL_AFTER_UPDATES} `agent_message_chunk` updates of"
        " it arrived, then time from right before writing the `session/cancel` notification to"
        " reading the prompt's response (`stopReason` must be `cancelled`); for the ACP v2"
        f" series ({SUBJECT_V2}: the same build, initialized with `protocolVersion: 2`) to"
        " reading the session's `idle` `state_update` (`stopReason: cancelled`), v2's end of a"
        " turn. acp-server runs"
        f" `--model script:PATH` with the response `{json.dumps(CANCEL_SCRIPT['responses'][0])}`"
        " (a chunk every 1 ms); the baseline is `benchmarks/programs/sdk_streaming_agent.py`,"
        ' an `acp.Agent` on the official SDK (`run_agent`) that streams a "tick " chunk every'
        " 1 ms until its per-session `asyncio.Event`, set by `cancel`, ends the turn. Same"
        " raw-pipe client for both (JSON lines on stdin; stdout read and timestamped line by"
        " line in one thread; no SDK client). acp-server answers only once the turn's"
        " `turn/end` is fsynced, the SDK agent keeps no journal: the floor series, alternated"
        f" with the two, appends a {len(TURN_END_LINE)}-byte line to a file beside acp-server's"
        " journals (`--data-dir` in a temporary directory next to the default data directory,"
        f" on {results['data_dir_filesystem']}) and times `write` + `fsync` in the bench"
        " process itself."
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
    floor = results["fsync_floor"]
    lines.append(f"| {FLOOR} | {spread_cells(floor)} | - | - |")
    subject = agents[SUBJECT]
    lines += [
        "",
        f"acp-server above the fsync floor (differences of percentiles): p50"
        f" {subject['p50_ms'] - floor['p50_ms']:+.2f} ms, p99"
        f" {subject['p99_ms'] - floor['p99_ms']:+.2f} ms; the SDK agent's p50 is"
        f" {agents[BASELINE]['p50_ms']:.2f} ms. Where acp-server's own share goes, stage by"
        " stage: [the cancel-latency"
        " RFC](rfc/implemented/architecture/2026-12-02-cancel-latency.md).",
    ]
    ratios = results["v2_vs_v1"]
    lines.append(
        f"ACP v2 against v1, same build, same run: p50 x{ratios['p50_ratio']:.2f}, p99"
        f" x{ratios['p99_ratio']:.2f}."
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
