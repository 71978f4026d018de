"""read-file: peak RSS of read_file on a 1.5 GiB sparse file (windows, never the whole file).
The baseline, when `--baseline` names a commit, is that commit's build run the same way.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from benchmarks.client import AgentProcess, text_prompt
from benchmarks.measure import Result, Target, evaluate, versions
from benchmarks.mode import Mode
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import render_header, render_verdicts, run_context

READ_FILE_ADDED_MIB_LIMIT = 64.0
READ_FILE_GIB = 1.5
READ_FILE_LINES = 1000  # of text before the hole and after it
READ_FILE_TIMEOUT_S = 600.0


def vm_hwm_mib(pid: int) -> float:
    """VmHWM (peak resident set) of the process itself, from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # reported in kB (KiB)
    raise RuntimeError(f"no VmHWM for pid {pid}")


def sparse_text_file(path: Path, size: int) -> None:
    """Text lines, a hole of zero bytes (one huge line, free on disk), text lines again."""
    head = "".join(f"line {i} of the head\n" for i in range(1, READ_FILE_LINES + 1))
    tail = "".join(f"line {i} of the tail\n" for i in range(1, READ_FILE_LINES + 1))
    with path.open("wb") as file:
        file.write(head.encode())
        file.truncate(size)
        file.seek(size - len(tail) - 1)
        file.write(("\n" + tail).encode())


def read_file_once(name: str, argv: list[str], cwd: str) -> Result:
    """Fresh process: peak RSS after session/new, then one prompt whose turn reads the file
    twice (its first window, then a window past the huge line), peak RSS again."""
    # A whole-file read of 1.5 GiB (the baseline build) takes minutes on a slow disk.
    with AgentProcess(name, argv, response_timeout=READ_FILE_TIMEOUT_S) as agent:
        agent.initialize()
        session_id = agent.new_session(cwd)
        before = vm_hwm_mib(agent.proc.pid)
        request_id, t0 = agent.request("session/prompt", text_prompt(session_id, "read it"))
        t1, result = agent.wait_response(request_id)
        after = vm_hwm_mib(agent.proc.pid)
        statuses = [s for s in agent.tool_statuses if s in ("completed", "failed")]
        exit_code = agent.close()
    return {
        "hwm_before_mib": before,
        "hwm_after_mib": after,
        "added_mib": after - before,
        "prompt_s": t1 - t0,
        "stop_reason": (result or {}).get("stopReason"),
        "tool_statuses": statuses,
        "exit": exit_code,
    }


def add_read_file_args(parser: argparse.ArgumentParser) -> None:
    add_baseline_args(parser)


def mode_read_file(args: argparse.Namespace) -> Result:
    agents = [(name, str(exe)) for name, exe in agents_to_measure(args).items()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        sparse_text_file(workspace / "big.txt", int(READ_FILE_GIB * 2**30))
        model = Path(tmp) / "model.json"
        responses = [
            [{"tool_call": {"name": "read_file", "arguments": {"path": "big.txt"}}}],
            [
                {
                    "tool_call": {
                        "name": "read_file",
                        "arguments": {"path": "big.txt", "offset": READ_FILE_LINES + 2},
                    }
                }
            ],
            [{"text": "read"}],
        ]
        model.write_text(json.dumps({"responses": responses}))
        for index, (name, exe) in enumerate(agents):
            argv = [exe, "--model", f"script:{model}", "--data-dir", f"{tmp}/data{index}"]
            rows.append({"agent": name, **read_file_once(name, argv, str(workspace))})
    added = rows[0]["added_mib"]
    targets: tuple[Target, ...] = (
        (
            f"acp-server: read_file on a {READ_FILE_GIB:g} GiB file adds"
            f" <= {READ_FILE_ADDED_MIB_LIMIT:g} MiB to the peak RSS",
            "subject_added_mib",
            "<=",
            READ_FILE_ADDED_MIB_LIMIT,
        ),
    )
    return {
        "mode": "read-file",
        **run_context(),
        "versions": versions(),
        "rows": rows,
        "verdicts": evaluate(targets, {"subject_added_mib": added}),
    }


def render_read_file(results: Result) -> str:
    method = (
        f"One fresh process per agent, one session in a workspace holding a {READ_FILE_GIB:g} GiB"
        f" sparse file: {READ_FILE_LINES} text lines, a hole of zero bytes (one line of about"
        f" {READ_FILE_GIB:g} GiB), {READ_FILE_LINES} text lines. One `session/prompt` whose"
        " scripted turn calls `read_file` twice: without arguments (the first window), then with"
        f" `offset` {READ_FILE_LINES + 2} (past the huge line). Peak RSS = VmHWM of the agent"
        " process, read after `session/new` and after the prompt's response; added = the"
        " difference. The baseline, when given, is another build run the same way."
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | peak RSS before MiB | peak RSS after MiB | added MiB | prompt s"
        " | stop reason | tool calls |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for row in results["rows"]:
        lines.append(
            f"| {row['agent']} | {row['hwm_before_mib']:.1f} | {row['hwm_after_mib']:.1f}"
            f" | {row['added_mib']:.1f} | {row['prompt_s']:.2f} | {row['stop_reason']}"
            f" | {', '.join(row['tool_statuses'])} |"
        )
    lines += render_verdicts(results)
    return "\n".join(lines) + "\n"


MODE = Mode(
    "read-file",
    "read_file memory",
    "peak RSS of read_file on a 1.5 GiB file (windows, never the whole file)",
    add_read_file_args,
    mode_read_file,
    render_read_file,
)
