"""text-call-start: the watcher of a tool call written as text (acp_server/agent/text_call_start.py)
reads each chunk of the message once; a maintained partial JSON parser (pydantic-core's
`from_json(allow_partial=True)`, which is jiter's partial mode) re-parses the text so far at
every chunk. CPU per call and the longest single chunk, on realistic calls and on long ones
streamed in small chunks, in this process (no agent, no I/O): the measurement the text-tool-calls
RFC decides on.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from pydantic_core import from_json

from acp_server.agent.text_call_start import CallStart
from benchmarks.measure import SUBJECT, Result, Target, evaluate, require_positive
from benchmarks.mode import Mode
from benchmarks.report import render_header, render_verdicts, run_context

OFFERED = {"read_file": None, "edit_file": None, "write_file": None, "bash": None}
KiB = 1024
CODE = 'def handle(request):\n    """Answer one request."""\n    return {"status": "ok", "n": 1}\n'

TARGETS: tuple[Target, ...] = (
    (
        "re-parsing CPU per 20 KiB call <= 2x the scanner's",
        "reparse_vs_scanner_20k",
        "<=",
        2.0,
    ),
    ("re-parsing: longest chunk of a 20 KiB call <= 1 ms", "reparse_worst_chunk_ms_20k", "<=", 1.0),
)


def fenced(name: str, arguments: dict[str, Any]) -> str:
    """A call as Qwen2.5-Coder writes it under llama.cpp: a fenced JSON object."""
    return "```json\n" + json.dumps({"name": name, "arguments": arguments}) + "\n```"


def code(size: int) -> str:
    return (CODE * (size // len(CODE) + 1))[:size]


def streams(long_sizes: list[int]) -> list[tuple[str, str]]:
    """(label, message): two realistic calls, then write_file calls of `long_sizes` bytes."""
    found = [
        ("read_file", fenced("read_file", {"path": "src/app/main.py", "offset": 120, "limit": 80})),
        (
            "edit_file, 1 KiB",
            fenced("edit_file", {"path": "a.py", "old_text": code(500), "new_text": code(520)}),
        ),
    ]
    for size in long_sizes:
        label = f"write_file, {size // KiB} KiB"
        found.append((label, fenced("write_file", {"path": "src/big.py", "content": code(size)})))
    return found


def scanner(chunks: list[str]) -> list[int]:
    """Today's watcher, asked for the arguments after every chunk (the loop asks at most every
    200 ms: a model slower than that per chunk); CPU ns per chunk."""
    watch = CallStart(OFFERED)
    spent = []
    for chunk in chunks:
        start = time.process_time_ns()
        if watch.watching:
            watch.feed(chunk)
        if watch.name is not None:
            watch.arguments()
        spent.append(time.process_time_ns() - start)
    return spent


def reparse(chunks: list[str]) -> list[int]:
    """The lead-in found by hand (as today), then the object's text so far parsed again at
    every chunk: what a partial parser needs to see a name, a refused key or the arguments as
    soon as they are written; CPU ns per chunk."""
    text = ""
    start_at = -1
    spent = []
    for chunk in chunks:
        start = time.process_time_ns()
        text += chunk
        if start_at < 0:
            start_at = text.find("{")
        if start_at >= 0:
            value = from_json(text[start_at:], allow_partial=True)
            if isinstance(value, dict):
                value.get("name"), value.get("arguments")
        spent.append(time.process_time_ns() - start)
    return spent


WATCHERS: dict[str, Callable[[list[str]], list[int]]] = {
    "scanner": scanner,
    "re-parse": reparse,
}


def measure(message: str, chunk: int, runs: int, watcher: str) -> Result:
    chunks = [message[at : at + chunk] for at in range(0, len(message), chunk)]
    totals, worst = [], 0
    for _ in range(runs):
        spent = WATCHERS[watcher](chunks)
        totals.append(sum(spent))
        worst = max(worst, max(spent))
    return {
        "chunks": len(chunks),
        "cpu_ms": statistics.median(totals) / 1e6,
        "worst_chunk_ms": worst / 1e6,
    }


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=5, help="runs per stream and watcher (5)")
    parser.add_argument("--chunk", type=int, default=4, help="characters per chunk (4)")
    parser.add_argument(
        "--sizes", default="20,100,1024", help="write_file content sizes in KiB (20,100,1024)"
    )
    parser.add_argument(
        "--reparse-max",
        type=int,
        default=128,
        help="largest message (KiB) re-parsed: its cost grows with the square of the size (128)",
    )


def run(args: argparse.Namespace) -> Result:
    require_positive(runs=args.runs, chunk=args.chunk)
    sizes = [int(size) * KiB for size in args.sizes.split(",")]
    rows = []
    for label, message in streams(sizes):
        row: Result = {"stream": label, "chars": len(message)}
        for watcher in WATCHERS:
            if watcher == "re-parse" and len(message) > args.reparse_max * KiB:
                row[watcher] = None
                continue
            row[watcher] = measure(message, args.chunk, args.runs, watcher)
        rows.append(row)
    twenty = next(row for row in rows if row["stream"] == "write_file, 20 KiB")
    metrics = {
        "reparse_vs_scanner_20k": twenty["re-parse"]["cpu_ms"] / twenty["scanner"]["cpu_ms"],
        "reparse_worst_chunk_ms_20k": twenty["re-parse"]["worst_chunk_ms"],
    }
    return {
        **run_context(),
        "versions": {d: importlib.metadata.version(d) for d in (SUBJECT, "pydantic-core")},
        "runs": args.runs,
        "chunk": args.chunk,
        "rows": rows,
        "verdicts": evaluate(TARGETS, metrics),
    }


def render(results: Result) -> str:
    method = (
        f"Each message is cut into chunks of {results['chunk']} characters (about a token) and "
        "fed to each watcher in this process; CPU time (`time.process_time_ns`) of every chunk. "
        "scanner: `CallStart.feed` and then `arguments()` after every chunk (the loop asks at most "
        "every 200 ms, so this is a model slower than that). re-parse: the lead-in found as "
        "today, then pydantic-core's `from_json(text, allow_partial=True)` on the object's text "
        f"so far at every chunk. {results['runs']} runs per stream and watcher: the median CPU "
        "per call, and the longest single chunk over all runs (how long the event loop, shared "
        "by every session of the process, is held by one chunk). Messages are fenced JSON calls; "
        "the write_file contents are Python source (quotes and newlines to escape)."
    )
    lines = render_header(results, method)
    lines += [
        "",
        "| stream | characters | chunks | scanner: CPU ms/call | scanner: longest chunk ms "
        "| re-parse: CPU ms/call | re-parse: longest chunk ms | re-parse / scanner |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["rows"]:
        scan, again = row["scanner"], row["re-parse"]
        tail = "not run (see --reparse-max) | | |"
        if again is not None:
            ratio = again["cpu_ms"] / scan["cpu_ms"]
            tail = f"{again['cpu_ms']:.2f} | {again['worst_chunk_ms']:.3f} | {ratio:.1f}x |"
        lines.append(
            f"| {row['stream']} | {row['chars']} | {scan['chunks']} | {scan['cpu_ms']:.2f} "
            f"| {scan['worst_chunk_ms']:.3f} | {tail}"
        )
    lines += render_verdicts(results)
    return "\n".join(lines)


MODE = Mode(
    "text-call-start",
    "Text tool calls: each chunk parsed once, or re-parsed",
    "the text-call watcher against a partial JSON parser re-parsing the text at every chunk",
    add_args,
    run,
    render,
)
