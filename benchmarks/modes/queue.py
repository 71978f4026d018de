"""queue: thousands of prompts queued in one session, run one after another, and withdrawn one
by one with `$/cancel_request`: the time per tenth shows whether a prompt's cost grows with
the queue."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from benchmarks.client import AgentError, _json_decoder, text_prompt
from benchmarks.measure import EXIT_TIMEOUT_S, Result, Target, evaluate, require_positive, versions
from benchmarks.mode import Mode
from benchmarks.other_build import add_baseline_args, agents_to_measure
from benchmarks.report import render_header, render_verdicts, run_context

QUEUE_CAP_S = 300.0
# The first prompt of a withdraw run streams until cancelled, so the others wait queued.
QUEUE_BLOCKER = [{"text": "tick ", "repeat": 10_000_000, "delay_ms": 5}]


class RawClient:
    """A client over raw pipes for the queue mode: one thread writes a batch of lines while
    this one reads; responses are filed by id as they are read."""

    def __init__(self, argv: list[str], cap_s: float) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        self._decode = _json_decoder()
        self._killer = threading.Timer(cap_s, self.proc.kill)  # a cap, so a slow run ends
        self._killer.start()
        self.answers: dict[int, Result] = {}

    def write(self, messages: list[Result]) -> threading.Thread:
        data = b"".join(json.dumps(m, separators=(",", ":")).encode() + b"\n" for m in messages)

        def write_all() -> None:
            with suppress(BrokenPipeError, ValueError):
                self._stdin.write(data)
                self._stdin.flush()

        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        return writer

    def read_until(self, done: Callable[[], bool], each: Callable[[Result], None]) -> None:
        """Read until `done()`; `each(response)` for every response read."""
        while not done():
            line = self._stdout.readline()
            if not line:
                raise AgentError("stdout closed (the run hit its cap, or the agent died)")
            message = self._decode(line)
            if "method" not in message and isinstance(message.get("id"), int):
                self.answers[message["id"]] = message
                each(message)

    def call(self, request_id: int, method: str, params: Result) -> Result:
        self.write([{"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}])
        self.read_until(lambda: request_id in self.answers, lambda _: None)
        return dict(self.answers[request_id].get("result") or {})

    def close(self) -> int:
        self._killer.cancel()
        with suppress(BrokenPipeError):
            self._stdin.close()
        try:
            code = self.proc.wait(EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._stdout.close()
        return code


def prompt_message(request_id: int, session_id: str) -> Result:
    params = text_prompt(session_id, f"prompt {request_id}")
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}


def queue_run_once(exe: Path, prompts: int, data_dir: str, cwd: str, cap_s: float) -> Result:
    """`prompts` prompts written at once into one `--model echo` session: the seconds until
    each tenth of them is answered, and until all are."""
    client = RawClient([str(exe), "--model", "echo", "--data-dir", data_dir], cap_s)
    result: Result = {"tenths_s": [], "answered": 0}
    try:
        client.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = client.call(1, "session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]
        ids = range(10, 10 + prompts)
        tenth = max(1, prompts // 10)
        t0 = time.perf_counter()

        def each(message: Result) -> None:
            if message["id"] >= 10 and "result" in message:
                result["answered"] += 1
                if result["answered"] % tenth == 0:
                    result["tenths_s"].append(time.perf_counter() - t0)

        client.write([prompt_message(i, session) for i in ids])
        client.read_until(lambda: result["answered"] == prompts, each)
        result["seconds"] = time.perf_counter() - t0
    except AgentError as exc:
        result["error"] = str(exc)
    result["exit"] = client.close()
    return result


def queue_withdraw_once(exe: Path, prompts: int, data_dir: str, cwd: str, cap_s: float) -> Result:
    """`prompts` prompts queued behind a turn that streams until cancelled, then one
    `$/cancel_request` each: the seconds from writing the first cancel to reading the last of
    their `cancelled` answers."""
    script = Path(data_dir) / "queue-blocker.json"
    script.write_text(json.dumps({"responses": [QUEUE_BLOCKER]}))
    argv = [str(exe), "--model", f"script:{script}", "--data-dir", data_dir]
    client = RawClient(argv, cap_s)
    result: Result = {"cancelled": 0}
    try:
        client.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = client.call(1, "session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]
        client.write([prompt_message(2, session)])  # the blocker
        ids = range(10, 10 + prompts)
        client.write([prompt_message(i, session) for i in ids]).join()
        cancels = [
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": i}}
            for i in ids
        ]

        def each(message: Result) -> None:
            if message["id"] >= 10 and message.get("result", {}).get("stopReason") == "cancelled":
                result["cancelled"] += 1

        t0 = time.perf_counter()
        client.write(cancels)
        client.read_until(lambda: result["cancelled"] == prompts, each)
        result["seconds"] = time.perf_counter() - t0
        client.write([{"jsonrpc": "2.0", "method": "session/cancel",
                       "params": {"sessionId": session}}])  # fmt: skip
        client.read_until(lambda: 2 in client.answers, lambda _: None)
    except AgentError as exc:
        result["error"] = str(exc)
    result["exit"] = client.close()
    return result


def add_queue_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prompts", type=int, default=10_000, help="prompts queued in one session (default 10000)"
    )
    parser.add_argument(
        "--cap-s",
        type=float,
        default=QUEUE_CAP_S,
        help=f"give up on an agent's run after this many seconds (default {QUEUE_CAP_S:g})",
    )
    add_baseline_args(parser)


def mode_queue(args: argparse.Namespace) -> Result:
    require_positive(prompts=args.prompts)
    runs: dict[str, Result] = {}
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        for name, exe in agents_to_measure(args).items():
            runs[name] = {
                "run": queue_run_once(exe, args.prompts, tmp, tmp, args.cap_s),
                "withdraw": queue_withdraw_once(exe, args.prompts, tmp, tmp, args.cap_s),
            }
    subject = next(iter(runs.values()))
    tenths = subject["run"]["tenths_s"]
    steps = [b - a for a, b in zip([0.0, *tenths], tenths, strict=False)]
    # Linear: the last tenth takes no more than twice the first (quadratic: ~19 times).
    shape = max(steps[-3:]) / max(min(steps[:3]), 1e-9) if len(steps) >= 6 else math.inf
    targets: tuple[Target, ...] = (
        ("queue: last tenths take <= 2x the first (O(1) per prompt)", "shape", "<=", 2.0),
    )
    return {
        "mode": "queue",
        **run_context(),
        "prompts": args.prompts,
        "cap_s": args.cap_s,
        "versions": versions(),
        "agents": runs,
        "verdicts": evaluate(targets, {"shape": shape}),
    }


def render_queue(results: Result) -> str:
    n, cap = results["prompts"], results["cap_s"]
    method = (
        f"Per agent, two fresh processes. run: {n:,} `session/prompt`s written at once into"
        " one `--model echo` session (each a turn of its own, queued behind the others); time"
        " from writing them to reading each tenth of the answers, and all of them. withdraw:"
        f" {n:,} prompts queued behind a turn that streams until cancelled (`--model"
        " script:`), then one `$/cancel_request` each; time from writing the first cancel to"
        f" reading the last `cancelled` answer. A run is cut off after {cap:g} s. The baseline"
        " is acp-server at the commit before O(1) queue operations (`--baseline`)."
    )
    lines = [
        *render_header(results, method),
        "",
        "| agent | run: all answered, s | run: seconds per tenth | withdraw: all cancelled, s |",
        "|---|---:|---|---:|",
    ]
    for name, r in results["agents"].items():
        run, withdraw = r["run"], r["withdraw"]
        run_s = (
            f"{run['seconds']:.1f}"
            if "seconds" in run
            else f"cut off: {run['answered']:,} answered in {cap:g}"
        )
        tenths = run["tenths_s"]
        per_tenth = " ".join(f"{b - a:.1f}" for a, b in zip([0.0, *tenths], tenths, strict=False))
        withdraw_s = (
            f"{withdraw['seconds']:.2f}"
            if "seconds" in withdraw
            else f"cut off: {withdraw['cancelled']:,} cancelled"
        )
        lines.append(f"| {name} | {run_s} | {per_tenth or '-'} | {withdraw_s} |")
    return "\n".join([*lines, *render_verdicts(results)]) + "\n"


MODE = Mode(
    "queue",
    "Queued prompts",
    "thousands of prompts queued in one session: run, and withdrawn",
    add_queue_args,
    mode_queue,
    render_queue,
)
