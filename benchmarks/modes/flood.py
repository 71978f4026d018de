"""flood: the peak memory of an agent whose client sends requests but never reads its output,
and whether every request is answered once the client reads again."""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path

from benchmarks.measure import EXIT_TIMEOUT_S, Result, Target, evaluate, require_positive, versions
from benchmarks.mode import Mode
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import render_header, render_verdicts, run_context

FLOOD_STALL_S = 2.0


def vm_hwm_mib(pid: int) -> float:
    """VmHWM (peak resident set) of the process, from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


def flood_once(exe: Path, requests: int, data_dir: str) -> Result:
    """`requests` initialize requests from a client that reads nothing until its writes stall
    for FLOOD_STALL_S (or all are written); then it reads every answer."""
    line = (
        b'{"jsonrpc":"2.0","id":%d,"method":"initialize",'
        b'"params":{"protocolVersion":1,"clientCapabilities":{}}}\n'
    )
    proc = subprocess.Popen(
        [str(exe), "--model", "echo", "--data-dir", data_dir],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    written = 0
    progress = threading.Event()

    def flood() -> None:
        nonlocal written
        assert proc.stdin is not None
        with suppress(BrokenPipeError):
            for request_id in range(requests):
                proc.stdin.write(line % request_id)
                written += 1
                progress.set()
            proc.stdin.close()

    writer = threading.Thread(target=flood, daemon=True)
    t0 = time.perf_counter()
    writer.start()
    while writer.is_alive():
        progress.clear()
        if not progress.wait(FLOOD_STALL_S):
            break
    stalled = writer.is_alive()
    written_unread = written
    peak = vm_hwm_mib(proc.pid)
    answered = 0
    for _ in proc.stdout:
        answered += 1
    total_s = time.perf_counter() - t0
    writer.join()
    exit_code = proc.wait(EXIT_TIMEOUT_S)
    proc.stdout.close()
    return {
        "peak_rss_mib": peak,
        "pushed_back": stalled,
        "written_before_reading": written_unread,
        "answered": answered,
        "seconds": total_s,
        "exit": exit_code,
    }


def add_flood_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--requests", type=int, default=100_000, help="initialize requests (default 100000)"
    )
    add_baseline_args(parser)


def mode_flood(args: argparse.Namespace) -> Result:
    require_positive(requests=args.requests)
    agents = agents_to_measure(args)
    runs: dict[str, Result] = {}
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        for name, exe in agents.items():
            runs[name] = flood_once(exe, args.requests, tmp)
    subject = next(iter(runs.values()))
    targets: tuple[Target, ...] = (
        ("no-read flood: peak RSS <= 100 MiB", "peak", "<=", 100.0),
        ("no-read flood: every request answered once the client reads", "answered", ">=", 1.0),
    )
    metrics = {
        "peak": subject["peak_rss_mib"],
        "answered": float(subject["answered"] == args.requests),
    }
    return {
        "mode": "flood",
        **run_context(),
        "requests": args.requests,
        "versions": versions(),
        "agents": runs,
        "verdicts": evaluate(targets, metrics),
    }


def render_flood(results: Result) -> str:
    n = results["requests"]
    method = (
        f"One fresh `--model echo` process per agent. A client thread writes {n} `initialize`"
        f" requests to its stdin without reading its stdout, until all are written or its"
        f" writes make no progress for {FLOOD_STALL_S:g} s (the agent stopped reading: pushed"
        " back); then peak RSS is read (VmHWM of the agent process) and the client reads every"
        " answer while the thread writes the rest. The baseline is acp-server at the commit"
        " before input backpressure (`--baseline`)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | pushed back | requests written before reading | peak RSS MiB |"
        " answered | seconds to all answers |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, r in results["agents"].items():
        lines.append(
            f"| {name} | {'yes' if r['pushed_back'] else 'no'} | {r['written_before_reading']:,}"
            f" | {r['peak_rss_mib']:.1f} | {r['answered']:,}/{n:,} | {r['seconds']:.1f} |"
        )
    return "\n".join([*lines, *render_verdicts(results)]) + "\n"


MODE = Mode(
    "flood",
    "No-read flood",
    "peak RSS of an agent whose client sends requests but does not read",
    add_flood_args,
    mode_flood,
    render_flood,
)
