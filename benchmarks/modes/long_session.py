"""long-session: hundreds of turns with tool outputs against a fake OpenAI-compatible server
with a small context window (tests/support/context_window_server.py, a thread of this
process): failed turns, peak request tokens against the window, time per turn. `--baseline`
runs the build of another commit (benchmarks/other_build.py) the same way after this one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.client import AgentError, AgentProcess, text_prompt
from benchmarks.measure import (
    REPO,
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

LONG_SESSION_TARGETS: tuple[Target, ...] = (
    ("long session: 0 failed turns", "failed_turns", "<=", 0.0),
    ("long session: peak request tokens <= the window", "peak_over_window", "<=", 0.0),
    ("long session: last-window s/turn <= 2x the first window's", "last_vs_first", "<=", 2.0),
)


def add_long_session_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=300, help="prompts in the session (300)")
    parser.add_argument("--window", type=int, default=8192, help="the server's n_ctx (8192)")
    parser.add_argument(
        "--file-lines", type=int, default=150, help="lines of the file read each turn (150)"
    )
    parser.add_argument(
        "--span", type=int, default=50, help="turns in the first and last window (50)"
    )
    add_baseline_args(parser)


def long_session_run(name: str, exe: str, args: argparse.Namespace) -> Result:
    """One agent build: a fresh fake server, process and session; `args.turns` prompts."""
    sys.path.insert(0, str(REPO))
    from tests.support.context_window_server import ContextWindowServer

    times: list[float] = []
    stop_reasons: dict[str, int] = {}
    errors: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, ContextWindowServer(n_ctx=args.window) as server:
        cwd = Path(tmp) / "work"
        cwd.mkdir()
        body = "".join(
            f"{n:5d}: a line of the file the agent reads every turn\n"
            for n in range(args.file_lines)
        )
        (cwd / server.file).write_text(body)
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "",
            "XDG_CONFIG_HOME": str(Path(tmp) / "config"),
        }
        data = Path(tmp) / "data"
        argv = [exe, "--model", "openai:fake", "--data-dir", str(data)]
        with AgentProcess(name, argv, env=env) as agent:
            agent.initialize()
            session_id = agent.new_session(str(cwd))
            for i in range(args.turns):
                request_id, t0 = agent.request(
                    "session/prompt", text_prompt(session_id, f"turn {i}: read the file again")
                )
                try:
                    t1, result = agent.wait_response(request_id)
                except AgentError as exc:
                    errors.append(str(exc))
                    times.append(time.perf_counter() - t0)
                    continue
                times.append(t1 - t0)
                reason = str((result or {}).get("stopReason"))
                stop_reasons[reason] = stop_reasons.get(reason, 0) + 1
            exit_code = agent.close()
        chats = server.chats()
        journals = list(data.rglob("*.jsonl"))
        records = [json.loads(line) for j in journals for line in j.read_text().splitlines()[1:]]
        compactions = [r for r in records if r.get("type") == "context/compaction"]
        journal_bytes = sum(j.stat().st_size for j in journals)
    accepted = [c.tokens for c in chats if c.answer != "exceeded"]
    first, last = times[: args.span], times[-args.span :]
    return {
        "agent": name,
        "file_bytes": len(body.encode()),
        "stop_reasons": stop_reasons,
        "errors": errors[:3],
        "failed": len(errors)
        + sum(n for reason, n in stop_reasons.items() if reason != "end_turn"),
        "requests": len(chats),
        "refused": sum(1 for c in chats if c.answer == "exceeded"),
        "trims": sum(1 for c in compactions if c.get("summary") is None),
        "summaries": sum(1 for c in compactions if c.get("summary") is not None),
        "peak_tokens": max(accepted) if accepted else 0,
        "first_median_s": statistics.median(first),
        "last_median_s": statistics.median(last),
        "total_s": sum(times),
        "journal_mib": journal_bytes / 2**20,
        "exit": exit_code,
    }


def mode_long_session(args: argparse.Namespace) -> Result:
    require_positive(turns=args.turns, window=args.window, span=args.span)
    if args.span * 2 > args.turns:
        sys.exit("bench: --span must be at most half of --turns")
    agents = [(name, str(exe)) for name, exe in agents_to_measure(args).items()]
    load_before = os.getloadavg()[0]
    rows = [long_session_run(name, exe, args) for name, exe in agents]
    subject = rows[0]
    metrics = {
        "failed_turns": float(subject["failed"]),
        "peak_over_window": float(max(0, subject["peak_tokens"] - args.window)),
        "last_vs_first": subject["last_median_s"] / subject["first_median_s"],
    }
    return {
        **run_context(),
        "versions": versions(),
        "turns": args.turns,
        "window": args.window,
        "span": args.span,
        "file_bytes": subject["file_bytes"],
        "rows": rows,
        "load": [load_before, os.getloadavg()[0]],
        "verdicts": evaluate(LONG_SESSION_TARGETS, metrics),
    }


def render_long_session(results: Result) -> str:
    span = results["span"]
    method = (
        f"Per agent build, one `acp-server --model openai:fake` process and one session against "
        "a fresh tests/support/context_window_server.py (a thread of this process on "
        f"127.0.0.1): an OpenAI-compatible server with a {results['window']:,}-token window "
        "(`n_ctx`, reported at `/props` as llama.cpp does) that counts a request as its JSON "
        "body's bytes / 4, reports that as usage, and answers llama.cpp's HTTP 400 "
        "`exceed_context_size_error` to any request over it. Each of the "
        f"{results['turns']} prompts makes the model call `read_file` on a "
        f"{results['file_bytes']:,}-byte file, then answer a line of text; a request without "
        "tools (a compaction's summary) gets a fixed summary. A turn fails when its response is "
        "not `end_turn`. Trims and summaries are the `context/compaction` records of the "
        "journal. s/turn = from writing `session/prompt` to reading its response; median over "
        f"the first and the last {span} turns. Builds run one after the other. Same raw-pipe "
        "client as the other modes (no SDK client)."
    )
    lines = render_header(results, method)
    lines += [
        "",
        "| agent | failed turns | stop reasons | model requests | refused by the server "
        "| trims | summaries | peak request tokens | window "
        f"| first {span}: median s/turn | last {span}: median s/turn | total s | journal MiB |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["rows"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(row["stop_reasons"].items()))
        lines.append(
            f"| {row['agent']} | {row['failed']} | {reasons or '-'} | {row['requests']} "
            f"| {row['refused']} | {row['trims']} | {row['summaries']} "
            f"| {row['peak_tokens']:,} | {results['window']:,} "
            f"| {row['first_median_s']:.4f} | {row['last_median_s']:.4f} "
            f"| {row['total_s']:.1f} | {row['journal_mib']:.2f} |"
        )
    for row in results["rows"]:
        if row["errors"]:
            lines.append(f"- {row['agent']}, first error: {row['errors'][0][:240]}...")
    lines.append(machine_load_note(results))
    lines += render_verdicts(results)
    lines += exit_warnings({row["agent"]: row["exit"] for row in results["rows"]})
    return "\n".join(lines)


MODE = Mode(
    "long-session",
    "Long session",
    "hundreds of turns with tool outputs against a server with a small context window",
    add_long_session_args,
    mode_long_session,
    render_long_session,
)
