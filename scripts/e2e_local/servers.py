"""`llama-server --jinja` on 127.0.0.1 and a free port (temperature 0, a fixed seed), and how to
tell that a stream to it was closed and that it is generating nothing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import suppress
from pathlib import Path
from typing import Any

from e2e_local.environment import Environment, Failure, info, tail

MODEL_ALIAS = "qwen"
CONTEXT_TOKENS = 8192  # what the runs used; acp-server then sends its compact prompt
SEED = 42
READY_TIMEOUT_S = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def llama_server_command(env: Environment, gguf: Path, port: int, threads: int = 2) -> list[str]:
    return [
        str(env.llama_server), "--model", str(gguf), "--jinja",
        "--host", "127.0.0.1", "--port", str(port), "--ctx-size", str(CONTEXT_TOKENS),
        "--threads", str(threads), "--alias", MODEL_ALIAS, "--no-webui",
        "--temp", "0", "--seed", str(SEED),  # the defaults of every request: reproducible
    ]  # fmt: skip


def start(command: list[str], env: Environment, log: Path) -> subprocess.Popen[bytes]:
    info(" ".join(command))
    info(f"server log: {log}")
    child_env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",  # llama_cpp.server's disconnect message, at once
        "LLAMA_CPP_LIB_PATH": str(env.libraries),
        "MTMD_CPP_LIB": str(env.libraries),
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=child_env,
            start_new_session=True,
        )


def wait_ready(process: subprocess.Popen[bytes], port: int, log: Path) -> float:
    """Poll /v1/models until it answers 200; returns the seconds it took."""
    url = f"http://127.0.0.1:{port}/v1/models"
    started = time.monotonic()
    deadline = started + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Failure(
                f"the server exited with {process.returncode} before answering; "
                f"log {log}:\n{tail(log)}"
            )
        with (
            suppress(urllib.error.URLError, OSError),
            urllib.request.urlopen(url, timeout=2) as response,
        ):
            if response.status == 200:
                return time.monotonic() - started
        time.sleep(0.1)
    raise Failure(f"{url} did not answer within {READY_TIMEOUT_S:.0f} s; log {log}:\n{tail(log)}")


def stop(process: subprocess.Popen[bytes], name: str) -> None:
    """SIGTERM the server's process group, then SIGKILL after 10 s."""
    if process.poll() is not None:
        info(f"{name} had already exited ({process.returncode})")
        return
    started = time.monotonic()
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
        how = "terminated"
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        how = "killed (did not exit within 10 s of SIGTERM)"
    info(f"{name} {how} in {time.monotonic() - started:.2f} s")


def served_model(port: int) -> str:
    """The model a running server at 127.0.0.1:port serves (`GET /v1/models`)."""
    url = f"http://127.0.0.1:{port}/v1/models"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            models = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise Failure(f"no server answered {url}: {exc}") from None
    entries = models.get("data") if isinstance(models, dict) else None
    names = [e.get("id") for e in entries or () if isinstance(e, dict)]
    if MODEL_ALIAS not in names:
        raise Failure(f"{url} serves {names}, not {MODEL_ALIAS!r} (start it with --alias qwen)")
    return MODEL_ALIAS


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


def processing(port: int) -> list[dict[str, Any]] | None:
    """llama-server's slots that are processing a request (`GET /slots`); None when the server
    does not say."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/slots", timeout=5) as response:
            slots = json.load(response)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if not isinstance(slots, list):
        return None
    return [slot for slot in slots if isinstance(slot, dict) and slot.get("is_processing")]


def busy_slots(port: int) -> int | None:
    """How many of llama-server's slots are processing a request; None when it does not say."""
    busy = processing(port)
    return None if busy is None else len(busy)


def output_limits(port: int) -> dict[int, Any]:
    """Each processing request's output limit as llama-server applies it (`params.n_predict`,
    -1 for none), by its task id."""
    return {
        int(slot.get("id_task", -1)): (slot.get("params") or {}).get("n_predict")
        for slot in processing(port) or ()
    }
