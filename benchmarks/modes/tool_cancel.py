"""tool-cancel: session/cancel -> cancelled latency while bash runs a process tree, group reaped.
There is no other agent to compare with: beside its bash process tree it times acp-server's own
streaming cancel, the cost of a cancel with no process to stop.
"""

from __future__ import annotations

import argparse
import json
import os
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
from benchmarks.streaming_cancel import CANCEL_AFTER_UPDATES, CANCEL_SCRIPT, cancel_sample

TOOL_CANCEL_TARGETS: tuple[Target, ...] = (
    ("acp-server tool cancel p99 <= 50 ms", "subject_p99_ms", "<=", 50.0),
    ("process group already empty at every `cancelled` response", "empty_share", ">=", 1.0),
)
# bash leads its own process group (pgid = $$, as the runner starts it in a new session) with
# two children that exit on SIGTERM; the pid file, written whole and then renamed into place,
# names all three.
TOOL_CANCEL_COMMAND = (
    "sleep 300 & a=$!; sleep 300 & b=$!; echo $$ $a $b > pids.tmp && mv pids.tmp pids; wait"
)
TOOL_CANCEL_SCRIPT = {
    "responses": [[{"tool_call": {"name": "bash", "arguments": {"command": TOOL_CANCEL_COMMAND}}}]]
}
TOOL_CANCEL_ENV = {"ACP_SERVER_SANDBOXED": "1"}  # lets root run --mode bypass: no permission asked
TOOL_CANCEL_SETTLE_S = 0.05
PIDFILE_TIMEOUT_S = 10.0
TOOL_SERIES = "bash process tree (target)"
STREAM_SERIES = "streaming text, no process (context)"


def pid_exists(pid: int, group: bool = False) -> bool:
    """Whether the process (or process group) exists; a zombie counts, it is not reaped yet."""
    try:
        (os.killpg if group else os.kill)(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_pidfile(path: Path) -> list[int]:
    """The pids the command wrote, once the file is in place. Nothing is read from the agent
    meanwhile: while the tool runs it writes nothing."""
    deadline = time.monotonic() + PIDFILE_TIMEOUT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise AgentError(
                f"{SUBJECT}: the command wrote no {path.name} in {PIDFILE_TIMEOUT_S} s"
            )
        time.sleep(0.001)
    return [int(pid) for pid in path.read_text().split()]


def tool_cancel_sample(agent: AgentProcess, session_id: str, pidfile: Path) -> Result:
    """Prompt; once bash is running (its tool_call_update `in_progress`, its pid file, then
    TOOL_CANCEL_SETTLE_S), cancel; time cancel write -> response; check the group right then."""
    pidfile.unlink(missing_ok=True)
    running = agent.tool_statuses.count("in_progress") + 1
    request_id, _ = agent.request("session/prompt", text_prompt(session_id, "go"))
    agent.wait_tool_status("in_progress", running)
    pids = wait_pidfile(pidfile)
    time.sleep(TOOL_CANCEL_SETTLE_S)
    started = all(pid_exists(pid) for pid in pids)
    t_cancel = agent.notify("session/cancel", {"sessionId": session_id})
    t_response, result = agent.wait_response(request_id)
    group_left = pid_exists(pids[0], group=True)
    survivors = [pid for pid in pids if pid_exists(pid)]
    return {
        "ms": (t_response - t_cancel) * 1000,
        "stop_reason": (result or {}).get("stopReason"),
        "pids": len(pids),
        "all_running_before": started,
        "group_empty": not group_left and not survivors,
        "survivors": survivors,
    }


def add_tool_cancel_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--samples", type=int, default=100, help="timed cancels per series (default 100)"
    )


def mode_tool_cancel(args: argparse.Namespace) -> Result:
    require_positive(samples=args.samples)
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp, ExitStack() as stack:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        pidfile = workspace / "pids"
        tool_script = Path(tmp) / "tool-cancel-script.json"
        tool_script.write_text(json.dumps(TOOL_CANCEL_SCRIPT))
        stream_script = Path(tmp) / "cancel-script.json"
        stream_script.write_text(json.dumps(CANCEL_SCRIPT))
        exe = str(subject_exe())
        tool_agent = stack.enter_context(
            AgentProcess(
                f"{SUBJECT} ({TOOL_SERIES})",
                [exe, "--model", f"script:{tool_script}", "--mode", "bypass"],
                env=TOOL_CANCEL_ENV,
            )
        )
        stream_agent = stack.enter_context(
            AgentProcess(
                f"{SUBJECT} ({STREAM_SERIES})", [exe, "--model", f"script:{stream_script}"]
            )
        )
        for agent in (tool_agent, stream_agent):
            agent.initialize()
        samplers = {
            TOOL_SERIES: partial(
                tool_cancel_sample, tool_agent, tool_agent.new_session(str(workspace)), pidfile
            ),
            STREAM_SERIES: partial(
                cancel_sample, stream_agent, stream_agent.new_session(str(workspace))
            ),
        }
        samples = alternate(samplers, args.samples)
        exit_codes = {
            name: agent.close()
            for name, agent in ((TOOL_SERIES, tool_agent), (STREAM_SERIES, stream_agent))
        }
    stats = {name: cancel_stats(runs) for name, runs in samples.items()}
    tool_runs = samples[TOOL_SERIES]
    stats[TOOL_SERIES] |= {
        "group_empty": sum(r["group_empty"] for r in tool_runs),
        "all_running_before": sum(r["all_running_before"] for r in tool_runs),
        "survivors": sorted({pid for r in tool_runs for pid in r["survivors"]}),
    }
    metrics = {
        "subject_p99_ms": stats[TOOL_SERIES]["p99_ms"],
        "empty_share": stats[TOOL_SERIES]["group_empty"] / args.samples,
    }
    return {
        "mode": "tool-cancel",
        **run_context(),
        "samples": args.samples,
        "versions": versions(),
        "series": stats,
        "exit_codes": exit_codes,
        "verdicts": evaluate(TOOL_CANCEL_TARGETS, metrics),
        "raw": samples,
    }


def render_tool_cancel(results: Result) -> str:
    series, n = results["series"], results["samples"]
    method = (
        f"{n} timed cancels per series, alternated A B A B ... after {WARMUP} uncounted"
        " ones each; one long-lived acp-server process and one session per series. Target"
        f" series: `acp-server --mode bypass` with {next(iter(TOOL_CANCEL_ENV))}=1 (no"
        " permission round trip) and a `--model script:PATH` whose only response calls `bash`"
        f" with `{TOOL_CANCEL_COMMAND}`: a process group of three (bash and two `sleep 300`"
        " children, all of which exit on SIGTERM). Per sample: send `session/prompt`, read until"
        " its `tool_call_update` `in_progress`, wait for the pid file, pause"
        f" {TOOL_CANCEL_SETTLE_S * 1000:.0f} ms, check all three pids exist, then time from"
        " right before writing `session/cancel` to reading the prompt's response (`stopReason`"
        " must be `cancelled`); right after reading it, `killpg(bash pid, 0)` and `kill(pid, 0)`"
        " for each pid must fail with ESRCH (a zombie would still count as a member: the agent"
        " must have reaped it). Context series: the `cancel` mode's streaming sample"
        f" (`{json.dumps(CANCEL_SCRIPT['responses'][0])}`, cancel after"
        f" {CANCEL_AFTER_UPDATES} chunks) on a second process: the cost of a cancel with no"
        " process to stop. Same raw-pipe client (JSON lines on stdin; stdout read and"
        " timestamped line by line in one thread; no SDK client)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| series | p50 ms | p90 ms | p99 ms | max ms | min ms | cancelled"
        " | group empty at the response |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in series.items():
        empty = f"{s['group_empty']}/{n}" if "group_empty" in s else "-"
        lines.append(f"| {name} | {spread_cells(s)} | {s['cancelled']}/{n} | {empty} |")
    lines += render_verdicts(results)
    lines += stop_reason_warnings(series, n)
    tool = series[TOOL_SERIES]
    if tool["all_running_before"] != n:
        lines.append(
            f"- WARNING: only {tool['all_running_before']}/{n} samples had all three processes"
            " running when the cancel was sent"
        )
    if tool["survivors"]:
        lines.append(f"- WARNING: pids alive at the response: {tool['survivors']}")
    lines += exit_warnings(results["exit_codes"])
    return "\n".join(lines) + "\n"


MODE = Mode(
    "tool-cancel",
    "Tool cancel",
    "session/cancel -> cancelled latency while bash runs a process tree, group reaped",
    add_tool_cancel_args,
    mode_tool_cancel,
    render_tool_cancel,
)
