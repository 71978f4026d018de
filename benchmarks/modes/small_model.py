"""small-model: acp-server and aider fix the same six one-line bugs with the same small local
model (Qwen2.5-Coder-1.5B-Instruct on one llama-server), side by side in one run.

Each run makes a fresh copy of a task's repository (benchmarks/fix_tasks.py) and gives one
agent the same prompt, with every file of the repository attached (acp-server: embedded
resources, as an editor's @-mention; aider: the files added to the chat), and, for the record,
runs without them. Pass = the tests pass afterwards (run by the benchmark) and no test file
changed. Every model request goes through one counting relay (benchmarks/model_relay.py).
The runs alternate agent by agent, task by task, so a change of the machine's load hits
every agent alike.

Needs what `scripts/e2e_local_model.py` sets up (`llama-server` and the model in
~/.cache/acp-server-e2e) and aider 0.86 in a virtual environment of its own (`--aider`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.fix_agents import MODEL_ALIAS, Run, run_acp_server, run_aider
from benchmarks.fix_tasks import PROMPT, TASKS, TEST_COMMAND
from benchmarks.measure import REPO, SUBJECT, Result, Target, evaluate, require_positive, versions
from benchmarks.mode import Mode
from benchmarks.model_relay import Relay
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import render_header, render_verdicts, run_context

sys.path.insert(0, str(REPO / "scripts"))  # the e2e setup's cache and server commands
from e2e_local import servers
from e2e_local.environment import CACHE, Failure, existing_environment

CONTEXT_TOKENS = 8192
READ_TIMEOUT = "[providers.openai]\nread_timeout = 600\n\n"
"""Every acp-server's: a loaded machine reads a prompt for minutes before the first token
(aider's own timeout is 600 s)."""
RECOMMENDED = f'[providers.openai.models."{MODEL_ALIAS}"]\nedit_format = "whole_file"\n'
"""The settings docs/local-model.md gives a small model ("Edit formats")."""
_BOTH = {SUBJECT, "aider"}
TARGETS: tuple[Target, ...] = (
    ("passes with files attached: acp-server minus aider >= 0", "passes_over", ">=", 0),
    ("model requests with files attached: acp-server minus aider <= 0", "requests_over", "<=", 0),
    ("files acp-server changed without showing an edit tool call <= 0", "unshown", "<=", 0),
    ("acp-server runs whose `/rewind 1` left a file changed <= 0", "not_rewound", "<=", 0),
)


def add_args(parser: argparse.ArgumentParser) -> None:
    add_baseline_args(parser)
    parser.add_argument("--runs", type=int, default=3, help="runs per task with files attached")
    parser.add_argument(
        "--runs-without-files",
        type=int,
        default=1,
        help="runs per task without attached files, for the record (default 1; 0: none)",
    )
    parser.add_argument("--tasks", help="comma-separated task names (default: all six)")
    parser.add_argument(
        "--aider",
        type=Path,
        default=shutil.which("aider"),
        help="aider 0.86's executable, in a virtual environment of its own (default: on PATH)",
    )
    parser.add_argument(
        "--agents",
        default="acp-server,aider",
        help="which of this checkout's acp-server and aider run (default: both; a --baseline"
        " build runs beside them)",
    )
    parser.add_argument(
        "--config",
        default=RECOMMENDED,
        help="this checkout's acp-server config file (not the baseline's, which is empty);"
        " default: the settings docs/local-model.md gives a small model, %(default)r",
    )
    parser.add_argument(
        "--port",
        type=int,
        help="use the llama-server already serving the model as `qwen` on 127.0.0.1:PORT",
    )
    parser.add_argument("--threads", type=int, default=2, help="llama-server's threads")
    parser.add_argument(
        "--n-predict",
        type=int,
        help="llama-server's cap on the tokens of one answer (`--n-predict`), the same for"
        " every agent; default: none (a runaway answer runs until the window is full)",
    )
    parser.add_argument(
        "--run-timeout", type=float, default=1800.0, help="seconds one run may take"
    )
    parser.add_argument("--results", type=Path, help="also write every run as JSON here")
    parser.add_argument(
        "--keep",
        type=Path,
        help="make the runs' repositories and acp-server's journals here, and keep them (for"
        " the transcripts); default: a temporary directory, removed at the end",
    )


def _server_command(threads: int, n_predict: int | None) -> tuple[list[str], Any]:
    """llama-server as a user starts it: the model, its chat template, the window; sampling
    left at the server's defaults, so each agent's own settings decide."""
    found = existing_environment(CACHE / "venv")
    if isinstance(found, str):
        raise Failure(found)
    env, gguf = found
    port = servers.free_port()
    command = [
        str(env.llama_server), "--model", str(gguf), "--jinja", "--host", "127.0.0.1",
        "--port", str(port), "--ctx-size", str(CONTEXT_TOKENS), "--threads", str(threads),
        "--parallel", "1", "--alias", MODEL_ALIAS, "--no-webui",
    ]  # fmt: skip
    if n_predict is not None:
        command += ["--n-predict", str(n_predict)]
    return command, (env, port)


def mode_small_model(args: argparse.Namespace) -> Result:
    require_positive(runs=args.runs)
    wanted = set(args.tasks.split(",")) if args.tasks else None
    tasks = [t for t in TASKS if wanted is None or t.name in wanted]
    if not tasks:
        sys.exit(f"bench: no task named {args.tasks}; the tasks: {[t.name for t in TASKS]}")
    chosen = set(args.agents.split(","))
    with_aider = "aider" in chosen
    if with_aider and (args.aider is None or not Path(args.aider).exists()):
        sys.exit("bench: aider not found: install aider-chat==0.86.* in a venv of its own and"
                 " pass --aider PATH/bin/aider (or leave it out of --agents)")  # fmt: skip
    acp_servers = {
        label: exe
        for label, exe in agents_to_measure(args).items()
        if label != SUBJECT or SUBJECT in chosen
    }
    load_before = os.getloadavg()[0]
    process = None
    if args.port is None:
        command, (env, port) = _server_command(args.threads, args.n_predict)
        log = Path(tempfile.gettempdir()) / "bench-small-model-llama-server.log"
        process = servers.start(command, env, log)
        servers.wait_ready(process, port, log)
        server_flags = " ".join(command[command.index("--jinja") :])
    else:
        port, server_flags = args.port, f"(already running on port {args.port})"
    runs: list[Run] = []
    try:
        with _scratch(args.keep) as tmp, Relay(f"http://127.0.0.1:{port}") as relay:
            config_home = Path(tmp) / "config"
            plain_home = Path(tmp) / "plain-config"  # the baseline's: only the timeout
            (config_home / "acp-server").mkdir(parents=True)
            (plain_home / "acp-server").mkdir(parents=True)
            (config_home / "acp-server" / "config.toml").write_text(READ_TIMEOUT + args.config)
            (plain_home / "acp-server" / "config.toml").write_text(READ_TIMEOUT)
            plan = [(True, n) for n in range(args.runs)]
            plan += [(False, n) for n in range(args.runs_without_files)]
            for attach, number in plan:
                for task in tasks:
                    for label, exe in acp_servers.items():
                        root = task.make(Path(tmp) / f"{task.name}-{label}-{attach}-{number}")
                        home = config_home if label == SUBJECT else plain_home
                        runs.append(
                            run_acp_server(
                                label, exe, task, root, relay, attach=attach, number=number,
                                config_home=home, timeout_s=args.run_timeout,
                            )
                        )  # fmt: skip
                        _progress(runs[-1])
                    if with_aider:
                        root = task.make(Path(tmp) / f"{task.name}-aider-{attach}-{number}")
                        runs.append(
                            run_aider(
                                Path(args.aider), task, root, relay, attach=attach,
                                number=number, timeout_s=args.run_timeout,
                            )
                        )  # fmt: skip
                        _progress(runs[-1])
    finally:
        if process is not None:
            servers.stop(process, "llama-server")
    records = [run.as_json() for run in runs]
    if args.results is not None:
        args.results.write_text(json.dumps(records, indent=2))
    summary = _summary(records)
    return {
        "mode": "small-model",
        **run_context(),
        "versions": {**versions(), **_aider_version(args)},
        "server": server_flags,
        "tasks": [{"name": t.name, "kind": t.kind} for t in tasks],
        "runs": args.runs,
        "runs_without_files": args.runs_without_files,
        "config": args.config,
        "records": records,
        "summary": summary,
        "load": (load_before, os.getloadavg()[0]),
        "verdicts": evaluate(TARGETS, _metrics(summary, records)) if chosen >= _BOTH else [],
    }


@contextmanager
def _scratch(keep: Path | None) -> Iterator[str]:
    """Where the runs happen: a kept directory under `keep`, else a temporary one."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="bench-small-") as tmp:
            yield tmp
        return
    keep.mkdir(parents=True, exist_ok=True)
    yield tempfile.mkdtemp(prefix="bench-small-", dir=keep)


def _progress(run: Run) -> None:
    record = run.as_json()
    print(
        f"{run.agent} {run.task} files={run.attach} #{run.number}: "
        f"{'PASS' if run.passed else 'fail'} in {record['seconds']} s, "
        f"{record['model_requests']} request(s), first {record['first_request_tokens']} tokens"
        f"{', ' + run.error if run.error else ''}",
        file=sys.stderr,
        flush=True,
    )


def _aider_version(args: argparse.Namespace) -> dict[str, str]:
    if "aider" not in args.agents.split(",") or args.aider is None:
        return {}
    python = Path(args.aider).parent / "python"
    try:
        found = subprocess.run(
            [str(python), "-c", "import aider; print(aider.__version__)"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {"aider": "unknown"}
    return {"aider": found.stdout.strip()}


def _summary(records: list[Result]) -> list[Result]:
    """One row per agent and variant: passes, medians of time, requests, first tokens."""
    rows: list[Result] = []
    keys = sorted({(r["agent"], r["attach"]) for r in records}, key=lambda k: (not k[1], k[0]))
    for agent, attach in keys:
        mine = [r for r in records if r["agent"] == agent and r["attach"] == attach]
        firsts = [r["first_request_tokens"] for r in mine if r["first_request_tokens"]]
        rows.append(
            {
                "agent": agent,
                "attach": attach,
                "runs": len(mine),
                "passes": sum(r["passed"] for r in mine),
                "median_s": statistics.median(r["seconds"] for r in mine),
                "requests": sum(r["model_requests"] for r in mine),
                "median_requests": statistics.median(r["model_requests"] for r in mine),
                "median_first_tokens": statistics.median(firsts) if firsts else None,
                "by_task": {
                    task: sum(r["passed"] for r in mine if r["task"] == task)
                    for task in dict.fromkeys(r["task"] for r in mine)
                },
                "errors": [r["error"] for r in mine if r["error"]],
            }
        )
    return rows


def _metrics(summary: list[Result], records: list[Result]) -> dict[str, float]:
    def row(agent: str) -> Result:
        return next(r for r in summary if r["agent"] == agent and r["attach"])

    ours, aider = row(SUBJECT), row("aider")
    mine = [r for r in records if r["agent"] == SUBJECT]
    return {
        "passes_over": ours["passes"] - aider["passes"],
        "requests_over": ours["requests"] - aider["requests"],
        "unshown": sum(len(r["changed_unshown"]) for r in mine),
        "not_rewound": sum(r["rewound"] is False for r in mine),
    }


def render_small_model(results: Result) -> str:
    tasks = ", ".join(f"`{t['name']}` ({t['kind']})" for t in results["tasks"])
    method = (
        f"Tasks: {tasks}; each a module and its test file, one line wrong. The prompt, the same"
        f' for every task and agent: "{PROMPT}" With files: every file of the repository'
        " attached (acp-server: embedded resources in the prompt; aider: added to the chat)."
        f" Test command for both: `{TEST_COMMAND}` (aider: `--test-cmd` with `--auto-test`,"
        " `--yes-always`; acp-server: what it detects or is configured with). Pass = the"
        " tests pass afterwards (run by the benchmark) and the test files are unchanged."
        f" {results['runs']} run(s) per task and agent with files,"
        f" {results['runs_without_files']} without; alternated agent by agent. Model requests"
        " are counted by a relay in front of the server; first-request tokens are the"
        " server's own count (`timings`: cached + read). Every acp-server's config has"
        " `read_timeout = 600` (aider waits 600 s too). llama-server flags:"
        f" `{results['server']}`."
        + (f" acp-server's config: `{results['config']}`." if results["config"].strip() else "")
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | files | passes | per task | median s | requests (all runs) | median"
        " requests | median first-request tokens |",
        "|---|---|---:|---|---:|---:|---:|---:|",
    ]
    for row in results["summary"]:
        per_task = ", ".join(f"{k} {v}" for k, v in row["by_task"].items())
        first = row["median_first_tokens"]
        lines.append(
            f"| {row['agent']} | {'attached' if row['attach'] else 'none'} |"
            f" {row['passes']} of {row['runs']} | {per_task} | {row['median_s']:.0f} |"
            f" {row['requests']} | {row['median_requests']:g} |"
            f" {'-' if first is None else f'{first:g}'} |"
        )
    lines += render_verdicts(results) if results["verdicts"] else []
    for row in results["summary"]:
        for error in row["errors"]:
            lines.append(f"- WARNING: {row['agent']}: {error}")
    before, after = results["load"]
    lines.append(
        f"\nMachine load (1-minute load average) at the start and the end: {before:.1f},"
        f" {after:.1f} on {results['machine']['cpu_count']} CPUs."
    )
    return "\n".join(lines) + "\n"


MODE = Mode(
    "small-model",
    "Small model fixes",
    "acp-server and aider fix six one-line bugs with Qwen2.5-Coder-1.5B on llama-server",
    add_args,
    mode_small_model,
    render_small_model,
)
