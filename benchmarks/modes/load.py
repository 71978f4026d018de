"""load: session/load time of a 10,000-record journal, and the journal's write overhead. Its
baselines are acp-server itself: a journal-less SessionLog driven in process, and the data
directory on tmpfs (/dev/shm) for the run over the wire.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from benchmarks.client import AgentProcess, text_prompt
from benchmarks.journal_workloads import (
    LOAD_SESSION_ID,
    agent_turns_once,
    build_journal,
    load_in_process,
)
from benchmarks.measure import (
    IDLE_SETTLE_S,
    SUBJECT,
    Result,
    Target,
    evaluate,
    percentile,
    require_positive,
    subject_exe,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.report import render_header, render_verdicts, run_context

LOAD_MS_LIMIT = 300.0
JOURNAL_OVERHEAD_PCT_LIMIT = 5.0
LOAD_EMPTY_SESSION_ID = "sess_bench_empty"
LOAD_SETTLED = f"{IDLE_SETTLE_S} s after initialize"
# name -> (session loaded, pause between the initialize response and session/load). A load sent
# right after the handshake waits for the runtime's import (AcpConnection.warm_up): the target
# is on the settled series. The header-only journal shows the fixed cost of a first
# session request.
LOAD_SERIES = {
    LOAD_SETTLED: (LOAD_SESSION_ID, IDLE_SETTLE_S),
    "right after initialize": (LOAD_SESSION_ID, 0.0),
    f"header only, {IDLE_SETTLE_S} s after initialize": (LOAD_EMPTY_SESSION_ID, IDLE_SETTLE_S),
}
OVERHEAD_SCRIPT = {"responses": [[{"text": "x ", "repeat": 20}]]}
SHM = Path("/dev/shm")
IN_MEMORY = "in-memory SessionLog"
JOURNAL_ON_DISK = "+ Journal on disk (as in production)"
APPENDS_ONLY = "+ Journal on disk, appends only (no flush)"
JOURNAL_ON_TMPFS = "+ Journal on /dev/shm (tmpfs)"


def load_once(argv: list[str], cwd: str, session_id: str, settle_s: float) -> Result:
    """Fresh process: initialize, pause `settle_s`, then time session/load from writing it to
    reading its response, counting the session/update notifications read meanwhile."""
    with AgentProcess(SUBJECT, argv) as agent:
        agent.initialize()
        time.sleep(settle_s)
        updates_before = agent.updates
        params = {"sessionId": session_id, "cwd": cwd, "mcpServers": []}
        request_id, t_sent = agent.request("session/load", params)
        t_answered, result = agent.wait_response(request_id)
        updates = agent.updates - updates_before
        exit_code = agent.close()
    return {
        "ms": (t_answered - t_sent) * 1000,
        "updates": updates,
        "ok": isinstance(result, dict),  # {}, or with the session's modes and options
        "exit": exit_code,
    }


def conversation_once(argv: list[str], cwd: str, turns: int) -> Result:
    """Fresh process and session: `turns` prompts one after another, timed from writing the
    first to reading the last response (startup and session/new excluded)."""
    with AgentProcess(SUBJECT, argv) as agent:
        agent.initialize()
        session_id = agent.new_session(cwd)
        chunks_before = agent.chunks
        stop_reasons = set()
        t0 = time.perf_counter()
        for i in range(turns):
            result = agent.call("session/prompt", text_prompt(session_id, f"prompt {i}"))
            stop_reasons.add(str((result or {}).get("stopReason")))
        seconds = time.perf_counter() - t0
        chunks = agent.chunks - chunks_before
        exit_code = agent.close()
    return {"s": seconds, "chunks": chunks, "stop_reasons": sorted(stop_reasons), "exit": exit_code}


def add_load_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--records", type=int, default=10_000, help="records in the loaded journal (default 10000)"
    )
    parser.add_argument(
        "--runs", type=int, default=10, help="timed loads, a fresh process each (default 10)"
    )
    parser.add_argument(
        "--turns", type=int, default=100, help="turns per write-overhead run (default 100)"
    )
    parser.add_argument(
        "--reps", type=int, default=5, help="write-overhead runs per variant; median (default 5)"
    )


def mode_load(args: argparse.Namespace) -> Result:
    import anyio

    require_positive(records=args.records, runs=args.runs, turns=args.turns, reps=args.reps)
    exe = str(subject_exe())
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="acp-bench-")))
        shm = None
        if SHM.is_dir() and os.access(SHM, os.W_OK):
            shm = Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="acp-bench-", dir=SHM))
            )
        cwd = str(tmp)

        # 1. session/load of a large journal, a fresh process per load.
        load_dir = tmp / "load-data"
        journal = build_journal(load_dir, args.records, cwd, LOAD_SESSION_ID)
        build_journal(load_dir, 0, cwd, LOAD_EMPTY_SESSION_ID)
        in_process = load_in_process(load_dir, args.runs)
        argv = [exe, "--model", "echo", "--data-dir", str(load_dir)]
        loads: dict[str, list[Result]] = {name: [] for name in LOAD_SERIES}
        for session_id, settle_s in LOAD_SERIES.values():  # warm-up, not counted
            load_once(argv, cwd, session_id, settle_s)
        for _ in range(args.runs):  # alternated
            for name, (session_id, settle_s) in LOAD_SERIES.items():
                loads[name].append(load_once(argv, cwd, session_id, settle_s))

        # 2. Journal write overhead: the same scripted conversation with and without it.
        script = tmp / "overhead-script.json"
        script.write_text(json.dumps(OVERHEAD_SCRIPT))
        # name -> (journal directory or None for no journal, durability flush at turn end)
        variants: dict[str, tuple[Path | None, bool]] = {
            IN_MEMORY: (None, False),
            JOURNAL_ON_DISK: (tmp / "inproc-disk", True),
            APPENDS_ONLY: (tmp / "inproc-noflush", False),
        }
        wire_dirs = {"data dir on disk": tmp / "wire-disk"}
        if shm is not None:
            variants[JOURNAL_ON_TMPFS] = (shm / "inproc", True)
            wire_dirs["data dir on /dev/shm (tmpfs)"] = shm / "wire"

        async def run_in_process(journal_dir: Path | None, flush: bool) -> Result:
            return await agent_turns_once(script, journal_dir, args.turns, flush=flush)

        agent_runs: dict[str, list[Result]] = {name: [] for name in variants}
        for journal_dir, flush in variants.values():  # warm-up, not counted
            anyio.run(run_in_process, journal_dir, flush, backend="asyncio")
        for _ in range(args.reps):  # alternated: A B C ... A B C ...
            for name, (journal_dir, flush) in variants.items():
                result = anyio.run(run_in_process, journal_dir, flush, backend="asyncio")
                agent_runs[name].append(result)

        wire_argvs = {
            name: [exe, "--model", f"script:{script}", "--data-dir", str(data_dir)]
            for name, data_dir in wire_dirs.items()
        }
        wire_runs: dict[str, list[Result]] = {name: [] for name in wire_argvs}
        for wire_argv in wire_argvs.values():  # warm-up, not counted
            conversation_once(wire_argv, cwd, args.turns)
        for _ in range(args.reps):  # alternated
            for name, wire_argv in wire_argvs.items():
                wire_runs[name].append(conversation_once(wire_argv, cwd, args.turns))

    load_stats = {}
    for name, runs in loads.items():
        ms = [r["ms"] for r in runs]
        load_stats[name] = {
            "session_id": LOAD_SERIES[name][0],
            "settle_s": LOAD_SERIES[name][1],
            "median_ms": statistics.median(ms),
            "p90_ms": percentile(ms, 90),
            "min_ms": min(ms),
            "max_ms": max(ms),
            "updates": sorted({r["updates"] for r in runs}),
            "all_ok": all(r["ok"] for r in runs),
            "exit_codes": sorted({r["exit"] for r in runs}),
        }
    baseline_s = statistics.median(r["s"] for r in agent_runs[IN_MEMORY])
    agent_stats = {}
    for name, runs in agent_runs.items():
        median_s = statistics.median(r["s"] for r in runs)
        agent_stats[name] = {
            "median_s": median_s,
            "min_s": min(r["s"] for r in runs),
            "ms_per_turn": median_s * 1000 / args.turns,
            "added_pct": (median_s / baseline_s - 1) * 100,
            "added_ms_per_turn": (median_s - baseline_s) * 1000 / args.turns,
            "records": sorted({r["records"] for r in runs}),
            "outcomes": sorted({o for r in runs for o in r["outcomes"]}),
        }
    wire_stats = {}
    wire_reference = statistics.median(r["s"] for r in list(wire_runs.values())[-1])
    for name, runs in wire_runs.items():
        median_s = statistics.median(r["s"] for r in runs)
        wire_stats[name] = {
            "median_s": median_s,
            "min_s": min(r["s"] for r in runs),
            "ms_per_turn": median_s * 1000 / args.turns,
            "vs_last_pct": (median_s / wire_reference - 1) * 100,
            "chunks": sorted({r["chunks"] for r in runs}),
            "stop_reasons": sorted({s for r in runs for s in r["stop_reasons"]}),
            "exit_codes": sorted({r["exit"] for r in runs}),
        }
    targets: tuple[Target, ...] = (
        (
            f"acp-server session/load of {journal['records']:,} records <= {LOAD_MS_LIMIT:g} ms"
            " (median)",
            "load_median_ms",
            "<=",
            LOAD_MS_LIMIT,
        ),
        (
            f"in-process journal write overhead (disk) <= {JOURNAL_OVERHEAD_PCT_LIMIT:g}% (median)",
            "journal_added_pct",
            "<=",
            JOURNAL_OVERHEAD_PCT_LIMIT,
        ),
    )
    metrics = {
        "load_median_ms": load_stats[LOAD_SETTLED]["median_ms"],
        "journal_added_pct": agent_stats[JOURNAL_ON_DISK]["added_pct"],
    }
    return {
        "mode": "load",
        **run_context(),
        "runs": args.runs,
        "turns": args.turns,
        "reps": args.reps,
        "versions": versions(),
        "journal": journal,
        "in_process_load": in_process,
        "load": load_stats,
        "agent_overhead": agent_stats,
        "wire_overhead": wire_stats,
        "verdicts": evaluate(targets, metrics),
        "raw": {"load": loads, "agent": agent_runs, "wire": wire_runs},
    }


def render_load(results: Result) -> str:
    journal, load, ctx = results["journal"], results["load"], results["in_process_load"]
    turns, reps = results["turns"], results["reps"]
    script = json.dumps(OVERHEAD_SCRIPT["responses"][0])
    method = (
        f"**session/load:** a journal of {journal['records']:,} records ({journal['turns']:,}"
        " turns; every other turn calls a tool: turn/start, a prompt, step/start, an assistant"
        " message with a tool call, its tool/result, step/end, a second step with a ~200"
        " character answer, turn/end; the others answer in one step) written with the"
        f" JournalStore API as `{LOAD_SESSION_ID}`, and a header-only journal"
        f" `{LOAD_EMPTY_SESSION_ID}` beside it. Each series: {results['runs']} timed loads after"
        " one uncounted, series alternated, each load in a fresh `acp-server --model echo"
        " --data-dir DIR`, sent right after the `initialize` response or"
        f" {IDLE_SETTLE_S} s later; time = from right before writing `session/load` to reading"
        " its response, while reading (and counting) the replayed `session/update`"
        " notifications. The target is on the settled series: a load sent right after the"
        " handshake also waits for the runtime's import (the warm-up, in a worker thread,"
        " deferred past ready by design)."
        f" **Journal write overhead:** {turns} turns of the scripted response `{script}`, one"
        f" prompt after another on one session; {reps} runs per variant, alternated, after one"
        " uncounted each; medians. In-process: `spawn_agent` on a `SessionLog` alone vs one"
        " wired as `acp_server/acp/wiring.py` `SessionWiring.start` does it"
        " (`on_append=journal.append`, `durability_flush=journal.flush`: an fsync in a worker"
        " thread at every turn end);"
        " time from the first `followup` to the last ticket. Over the wire: fresh"
        f" `acp-server --model script:PATH` per run, `session/new`, then the {turns} prompts"
        " (each awaited), from the first write to the last response; the journal cannot be"
        " switched off there, so the data directory on disk is compared with one on tmpfs"
        " (`/dev/shm`: same writes, fsync costs nothing)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| `session/load` of | sent | records | file MiB | updates replayed"
        " | median ms | p90 ms | min ms | max ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in load.values():
        big = s["session_id"] == LOAD_SESSION_ID
        records = f"{journal['records']:,}" if big else "0"
        size = f"{journal['bytes'] / 2**20:.2f}" if big else "-"
        sent = "right after initialize" if s["settle_s"] == 0 else f"{s['settle_s']} s later"
        lines.append(
            f"| `{s['session_id']}` | {sent} | {records} | {size}"
            f" | {', '.join(f'{u:,}' for u in s['updates'])} | {s['median_ms']:.1f}"
            f" | {s['p90_ms']:.1f} | {s['min_ms']:.1f} | {s['max_ms']:.1f} |"
        )
    lines += [
        "",
        f"Measured in this process for context (median of {results['runs']}):"
        f" `JournalStore.open` (read, parse, lock) {ctx['open_median_ms']:.1f} ms and"
        f" `replay_updates` (records to updates, {ctx['expected_updates']:,} of them)"
        f" {ctx['replay_updates_median_ms']:.1f} ms; the rest of a load is sending the"
        " updates (and, on a process's first session request, importing the session runtime).",
        "",
        f"In-process write overhead ({turns} turns):",
        "",
        "| variant | median s | min s | ms per turn | added ms per turn | added vs in-memory |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, s in results["agent_overhead"].items():
        lines.append(
            f"| {name} | {s['median_s']:.3f} | {s['min_s']:.3f} | {s['ms_per_turn']:.3f}"
            f" | {s['added_ms_per_turn']:+.3f} | {s['added_pct']:+.1f}% |"
        )
    agent = results["agent_overhead"]
    appends, tmpfs = agent.get(APPENDS_ONLY), agent.get(JOURNAL_ON_TMPFS)
    if appends is not None:
        base = appends["added_ms_per_turn"]
        parts = [
            f"the appends alone {base:+.3f} ms",
            f"the turn-end flush on disk {agent[JOURNAL_ON_DISK]['added_ms_per_turn'] - base:+.3f}"
            " ms",
        ]
        if tmpfs is not None:
            parts.append(
                f"the flush on tmpfs, where fsync is nearly free, so mostly the worker-thread"
                f" round trip of `Journal.flush`: {tmpfs['added_ms_per_turn'] - base:+.3f} ms"
            )
        lines += ["", "Added per turn, by part (differences of medians): " + "; ".join(parts) + "."]
    wire = results["wire_overhead"]
    reference = list(wire)[-1]
    lines += [
        "",
        f"Over the wire ({turns} prompts; context, no target):",
        "",
        f"| acp-server | median s | min s | ms per turn | vs {reference} |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, s in wire.items():
        lines.append(
            f"| {name} | {s['median_s']:.3f} | {s['min_s']:.3f} | {s['ms_per_turn']:.2f}"
            f" | {s['vs_last_pct']:+.1f}% |"
        )
    lines += render_verdicts(results)
    for name, s in load.items():
        expected = ctx["expected_updates"] if s["session_id"] == LOAD_SESSION_ID else 0
        if not s["all_ok"] or s["updates"] != [expected]:
            lines.append(
                f"- WARNING: {name}: a load failed, or sent {s['updates']} session/update"
                f" notifications where `replay_updates` makes {expected}"
            )
        if s["exit_codes"] != [0]:
            lines.append(f"- WARNING: {name}: exit codes {s['exit_codes']} after stdin closed")
    for name, s in results["agent_overhead"].items():
        if s["outcomes"] != ["Completed"]:
            lines.append(f"- WARNING: {name}: turn outcomes {s['outcomes']}")
    for name, s in wire.items():
        if s["stop_reasons"] != ["end_turn"] or s["exit_codes"] != [0]:
            lines.append(
                f"- WARNING: {name}: stop reasons {s['stop_reasons']}, exit codes {s['exit_codes']}"
            )
    return "\n".join(lines) + "\n"


MODE = Mode(
    "load",
    "Session load",
    "session/load time of a 10,000-record journal, and the journal's write overhead",
    add_load_args,
    mode_load,
    render_load,
)
