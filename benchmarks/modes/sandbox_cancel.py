"""sandbox-cancel: session/cancel -> cancelled latency of a bash process tree confined by
bubblewrap (`--mode sandboxed`) beside the same tree unconfined (`--mode bypass`), nothing left.

Inside the sandbox the shell sees the pids of its own namespace, so the processes are found on
the host by a mark in their environment instead of by pid: every process of the tree carries
`BENCH_MARK=<random>`, and after each response /proc is scanned for it (zombies included: the
agent must have reaped them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from benchmarks.client import AgentError, AgentProcess, text_prompt
from benchmarks.measure import (
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

TARGETS: tuple[Target, ...] = (
    ("sandboxed cancel p99 <= 2x the unsandboxed p99", "p99_ratio", "<=", 2.0),
    ("no process of either tree left at any `cancelled` response", "empty_share", ">=", 1.0),
)
SETTLE_S = 0.05
READY_TIMEOUT_S = 10.0
SANDBOXED = "sandboxed: bwrap, own pid namespace (target)"
PLAIN = "unsandboxed: bypass (baseline)"
MARK = "BENCH_MARK"
# Two sleeps that exit on SIGTERM; `ready` is written whole and renamed into place.
COMMAND = (
    "export {mark}; sleep 300 & sleep 300 & echo started > ready.tmp && mv ready.tmp ready; wait"
)


def marked(mark: str) -> list[int]:
    """Pids of every process (zombies included) whose environment holds `mark`."""
    found = []
    entry = mark.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if entry in environ:
            found.append(int(name))
    return found


def wait_ready(path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise AgentError(f"{SUBJECT}: the command wrote no {path.name} in {READY_TIMEOUT_S} s")
        time.sleep(0.001)


def sample(agent: AgentProcess, session_id: str, workspace: Path, mark: str) -> Result:
    """Prompt; once the tree runs (its `ready` file, then SETTLE_S), cancel; time cancel write
    -> response; then scan /proc for the tree's mark."""
    ready = workspace / "ready"
    ready.unlink(missing_ok=True)
    running = agent.tool_statuses.count("in_progress") + 1
    request_id, _ = agent.request("session/prompt", text_prompt(session_id, "go"))
    agent.wait_tool_status("in_progress", running)
    wait_ready(ready)
    time.sleep(SETTLE_S)
    before = len(marked(mark))
    t_cancel = agent.notify("session/cancel", {"sessionId": session_id})
    t_response, result = agent.wait_response(request_id)
    left = marked(mark)
    return {
        "ms": (t_response - t_cancel) * 1000,
        "stop_reason": (result or {}).get("stopReason"),
        "running_before": before,
        "left": left,
    }


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--samples", type=int, default=100, help="timed cancels per series (default 100)"
    )


def agent_for(
    stack: ExitStack, tmp: Path, name: str, mode: str, env: dict[str, str]
) -> tuple[AgentProcess, str, Path, str]:
    """An acp-server in `mode` whose model runs the marked tree; (agent, session, ws, mark)."""
    mark = f"{MARK}={os.urandom(8).hex()}"
    workspace = tmp / mode
    workspace.mkdir()
    script = tmp / f"{mode}-script.json"
    call = {"name": "bash", "arguments": {"command": COMMAND.format(mark=mark)}}
    script.write_text(json.dumps({"responses": [[{"tool_call": call}]]}))
    argv = [str(subject_exe()), "--model", f"script:{script}", "--mode", mode]
    agent = stack.enter_context(AgentProcess(f"{SUBJECT} ({name})", argv, env=env))
    agent.initialize()
    return agent, agent.new_session(str(workspace)), workspace, mark


def run(args: argparse.Namespace) -> Result:
    require_positive(samples=args.samples)
    if shutil.which("bwrap") is None:
        raise AgentError("bwrap is not installed: apt-get install bubblewrap")
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp, ExitStack() as stack:
        agents = {
            SANDBOXED: agent_for(stack, Path(tmp), SANDBOXED, "sandboxed", {}),
            # ACP_SERVER_SANDBOXED=1 lets root use bypass: no permission round trip either way.
            PLAIN: agent_for(stack, Path(tmp), PLAIN, "bypass", {"ACP_SERVER_SANDBOXED": "1"}),
        }
        samples = alternate(
            {name: partial(sample, *parts) for name, parts in agents.items()}, args.samples
        )
        exit_codes = {name: parts[0].close() for name, parts in agents.items()}
    stats = {}
    for name, runs in samples.items():
        stats[name] = {
            **cancel_stats(runs),
            "empty": sum(not r["left"] for r in runs),
            "running_before": sorted({r["running_before"] for r in runs}),
            "left": sorted({pid for r in runs for pid in r["left"]}),
        }
    metrics = {
        "p99_ratio": stats[SANDBOXED]["p99_ms"] / stats[PLAIN]["p99_ms"],
        "empty_share": min(s["empty"] for s in stats.values()) / args.samples,
    }
    return {
        "mode": "sandbox-cancel",
        **run_context(),
        "samples": args.samples,
        "versions": versions(),
        "series": stats,
        "exit_codes": exit_codes,
        "verdicts": evaluate(TARGETS, metrics),
        "raw": samples,
    }


def render(results: Result) -> str:
    series, n = results["series"], results["samples"]
    method = (
        f"{n} timed cancels per series, alternated A B A B ... after {WARMUP} uncounted ones"
        " each; one long-lived acp-server process and one session per series, each with a"
        " `--model script:PATH` whose only response calls `bash` with"
        f" `{COMMAND.format(mark=MARK + '=<random>')}`. Target series: `--mode sandboxed`"
        " (bubblewrap: read-only root, private /tmp, no network, own pid namespace). Baseline:"
        " `--mode bypass` with ACP_SERVER_SANDBOXED=1 (no permission round trip either way)."
        " Per sample: send `session/prompt`, read until its `tool_call_update` `in_progress`,"
        f" wait for the `ready` file, pause {SETTLE_S * 1000:.0f} ms, count the processes"
        " carrying the mark, then time from right before writing `session/cancel` to reading"
        " the prompt's response (`stopReason` must be `cancelled`); right after it, /proc is"
        " scanned for the mark (a zombie counts: the agent must have reaped it). Raw-pipe client"
        " (JSON lines on stdin; stdout read and timestamped line by line in one thread)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| series | p50 ms | p90 ms | p99 ms | max ms | min ms | cancelled"
        " | processes before | none left at the response |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in series.items():
        before = "/".join(str(c) for c in s["running_before"])
        lines.append(
            f"| {name} | {spread_cells(s)} | {s['cancelled']}/{n} | {before} | {s['empty']}/{n} |"
        )
    lines += render_verdicts(results)
    lines += stop_reason_warnings(series, n)
    for name, s in series.items():
        if s["left"]:
            lines.append(f"- WARNING: {name}: pids alive at the response: {s['left']}")
    lines += exit_warnings(results["exit_codes"])
    return "\n".join(lines) + "\n"


MODE = Mode(
    "sandbox-cancel",
    "Sandbox cancel",
    "cancel latency of a bubblewrap-confined bash tree beside the unconfined one",
    add_args,
    run,
    render,
)
