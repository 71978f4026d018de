"""provider: `acp-server --model openai:bench` against a fake OpenAI-compatible SSE server
(benchmarks/programs/openai_sse_server.py, a subprocess); its baseline, the floor of the
added latency, is benchmarks/programs/sse_relay_agent.py, a trivial SSE -> stdout relay.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, suppress
from functools import partial
from pathlib import Path

from benchmarks.client import AgentError, AgentProcess, text_prompt
from benchmarks.measure import (
    EXIT_TIMEOUT_S,
    PROGRAMS,
    RESPONSE_TIMEOUT_S,
    Result,
    Target,
    evaluate,
    require_positive,
    subject_exe,
    versions,
)
from benchmarks.mode import Mode
from benchmarks.report import exit_warnings, render_header, render_verdicts, run_context
from benchmarks.sampling import WARMUP, alternate, cancel_stats, spread, spread_cells

PROVIDER_TARGETS: tuple[Target, ...] = (
    (
        "acp-server added latency p99 <= 1 ms (SSE chunk written -> its agent_message_chunk"
        " read, relay floor not subtracted)",
        "subject_p99_ms",
        "<=",
        1.0,
    ),
    (
        "cancel closes the HTTP stream p99 <= 10 ms (session/cancel written -> the server"
        " sees the close)",
        "close_p99_ms",
        "<=",
        10.0,
    ),
)
PROVIDER_MODEL = "openai:bench"
PROVIDER_SERIES = f"acp-server --model {PROVIDER_MODEL}"
RELAY_SERIES = "floor: trivial SSE -> stdout relay"
PROVIDER_CANCEL_AFTER = 3  # chunks of the slow stream read before the cancel
PROVIDER_CANCEL_INTERVAL_MS = 50.0
PROVIDER_CANCEL_CHUNKS = 400  # 20 s at 50 ms: a stream nobody closes still ends
CHUNK_TEXT = re.compile(r"(p\d+)\.(\d+) ")  # what the fake server streams: "TAG.i "


class FakeOpenAIServer:
    """benchmarks/programs/openai_sse_server.py in a subprocess, driven over its pipes:
    plans (how many chunks, how far apart) go to its stdin; one report per answer (the
    time.perf_counter of every chunk's send, when it saw the connection close) comes back."""

    def __init__(self) -> None:
        argv = [sys.executable, str(PROGRAMS / "openai_sse_server.py")]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        self._tags = 0
        hello = self._readline()
        # Send and read times are compared across processes: both must read CLOCK_MONOTONIC.
        ours = time.get_clock_info("perf_counter").implementation
        if "CLOCK_MONOTONIC" not in ours or "CLOCK_MONOTONIC" not in hello["clock"]:
            self.close()
            sys.exit(f"bench: perf_counter is {ours} here, {hello['clock']} in the server")
        self.base_url = f"http://127.0.0.1:{hello['port']}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _readline(self) -> Result:
        watchdog = threading.Timer(RESPONSE_TIMEOUT_S, self.proc.kill)
        watchdog.start()
        try:
            line = self._stdout.readline()
        finally:
            watchdog.cancel()
        if not line:
            raise AgentError("fake OpenAI server: stdout closed")
        result: Result = json.loads(line)
        return result

    def plan(self, chunks: int, interval_ms: float) -> str:
        """Queue the answer to the next request; returns its tag (the chunks say "TAG.i ")."""
        self._tags += 1
        tag = f"p{self._tags}"
        plan = {"tag": tag, "chunks": chunks, "interval_ms": interval_ms}
        self._stdin.write(json.dumps(plan).encode() + b"\n")
        self._stdin.flush()
        return tag

    def report(self) -> Result:
        """The report of the next answer that ended (completed, or closed by the client)."""
        return self._readline()

    def close(self) -> None:
        with suppress(BrokenPipeError):
            self._stdin.close()
        try:
            self.proc.wait(EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._stdout.close()


def provider_latency_prompt(
    agent: AgentProcess, server: FakeOpenAIServer, session_id: str, chunks: int, interval: float
) -> Result:
    """One prompt answered by `chunks` SSE chunks `interval` ms apart: per chunk, the time from
    right before the server's send to the client reading the line carrying its text."""
    tag = server.plan(chunks, interval)
    agent.texts, agent.chunk_times = [], []
    request_id, _ = agent.request("session/prompt", text_prompt(session_id, "go"))
    _, result = agent.wait_response(request_id)
    report = server.report()
    texts, times = agent.texts, agent.chunk_times
    agent.texts = agent.chunk_times = None
    received: dict[int, float] = {}
    for text, t in zip(texts, times, strict=True):
        for found, index in CHUNK_TEXT.findall(text):
            if found == tag:
                received.setdefault(int(index), t)
    sent = report["sent"]
    return {
        "ms": [(received[i] - t) * 1000 for i, t in enumerate(sent) if i in received],
        "sent": len(sent),
        "chunk_lines": len(times),
        "stop_reason": (result or {}).get("stopReason"),
        "complete": report["complete"],
        "request": f"{report['path']} model={report['model']}",
    }


def provider_cancel_sample(
    agent: AgentProcess, server: FakeOpenAIServer, session_id: str
) -> Result:
    """A chunk every PROVIDER_CANCEL_INTERVAL_MS; after PROVIDER_CANCEL_AFTER of them are read,
    cancel. Times from right before writing session/cancel to (a) reading the prompt's response
    and (b) the server seeing the connection close (its own clock reading, CLOCK_MONOTONIC)."""
    server.plan(PROVIDER_CANCEL_CHUNKS, PROVIDER_CANCEL_INTERVAL_MS)
    first_chunks = agent.chunks + PROVIDER_CANCEL_AFTER
    request_id, _ = agent.request("session/prompt", text_prompt(session_id, "go"))
    agent.wait_chunks(first_chunks)
    t_cancel = agent.notify("session/cancel", {"sessionId": session_id})
    t_response, result = agent.wait_response(request_id)
    report = server.report()
    closed_at = report["closed_at"]
    return {
        "response_ms": (t_response - t_cancel) * 1000,
        "close_ms": math.inf if closed_at is None else (closed_at - t_cancel) * 1000,
        "stop_reason": (result or {}).get("stopReason"),
        "sent_after_cancel": sum(t > t_cancel for t in report["sent"]),
    }


def add_provider_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prompts", type=int, default=10, help="timed prompts per series (default 10)"
    )
    parser.add_argument(
        "--chunks", type=int, default=200, help="SSE chunks per prompt (default 200)"
    )
    parser.add_argument(
        "--interval-ms",
        type=float,
        default=2.0,
        help="pause between the chunks of a timed prompt (default 2)",
    )
    parser.add_argument("--cancel-samples", type=int, default=50, help="timed cancels (default 50)")


def mode_provider(args: argparse.Namespace) -> Result:
    require_positive(prompts=args.prompts, chunks=args.chunks, cancel_samples=args.cancel_samples)
    if not args.interval_ms > 0:
        sys.exit("bench: --interval-ms must be > 0")
    prompts: dict[str, list[Result]] = {PROVIDER_SERIES: [], RELAY_SERIES: []}
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp, ExitStack() as stack:
        server = stack.enter_context(FakeOpenAIServer())
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "",  # none is sent: nothing real leaves for the fake server
            "XDG_CONFIG_HOME": str(Path(tmp) / "config"),  # no user config file applies
        }
        argvs = {
            PROVIDER_SERIES: [
                str(subject_exe()),
                *("--model", PROVIDER_MODEL, "--data-dir", str(Path(tmp) / "data")),
            ],
            RELAY_SERIES: [sys.executable, str(PROGRAMS / "sse_relay_agent.py")],
        }
        agents = {
            name: stack.enter_context(AgentProcess(name, argv, env=env))
            for name, argv in argvs.items()
        }
        sessions = {}
        for name, agent in agents.items():
            agent.initialize()
            sessions[name] = agent.new_session(tmp)
        for name, agent in agents.items():  # warm-up, not counted
            provider_latency_prompt(agent, server, sessions[name], args.chunks, args.interval_ms)
        for _ in range(args.prompts):  # alternated: A B A B ...
            for name, agent in agents.items():
                prompts[name].append(
                    provider_latency_prompt(
                        agent, server, sessions[name], args.chunks, args.interval_ms
                    )
                )
        subject = agents[PROVIDER_SERIES]
        cancels = alternate(
            {
                PROVIDER_SERIES: partial(
                    provider_cancel_sample, subject, server, sessions[PROVIDER_SERIES]
                )
            },
            args.cancel_samples,
        )[PROVIDER_SERIES]
        exit_codes = {name: agent.close() for name, agent in agents.items()}
    latency = {}
    for name, runs in prompts.items():
        ms = [x for r in runs for x in r["ms"]]
        latency[name] = {
            **spread(ms),
            "matched": len(ms),
            "over_1ms": sum(x > 1.0 for x in ms),
            "over_1ms_per_prompt": [sum(x > 1.0 for x in r["ms"]) for r in runs],
            "sent": sum(r["sent"] for r in runs),
            "chunk_lines": sum(r["chunk_lines"] for r in runs),
            "stop_reasons": sorted({str(r["stop_reason"]) for r in runs}),
            "all_complete": all(r["complete"] for r in runs),
            "requests": sorted({r["request"] for r in runs}),
        }
    response = cancel_stats(cancels, "response_ms")
    cancel = {
        "response": spread([c["response_ms"] for c in cancels]),
        "close": spread([c["close_ms"] for c in cancels]),
        "closed": sum(math.isfinite(c["close_ms"]) for c in cancels),
        "cancelled": response["cancelled"],
        "stop_reasons": response["stop_reasons"],
        "sent_after_cancel_max": max(c["sent_after_cancel"] for c in cancels),
    }
    metrics = {
        "subject_p99_ms": latency[PROVIDER_SERIES]["p99_ms"],
        "close_p99_ms": cancel["close"]["p99_ms"],
    }
    return {
        "mode": "provider",
        **run_context(),
        "prompts": args.prompts,
        "chunks_per_prompt": args.chunks,
        "interval_ms": args.interval_ms,
        "cancel_samples": args.cancel_samples,
        "versions": versions(),
        "latency": latency,
        "cancel": cancel,
        "exit_codes": exit_codes,
        "verdicts": evaluate(PROVIDER_TARGETS, metrics),
        "raw": {"prompts": prompts, "cancels": cancels},
    }


def render_provider(results: Result) -> str:
    latency, cancel = results["latency"], results["cancel"]
    n, chunks, interval = results["prompts"], results["chunks_per_prompt"], results["interval_ms"]
    samples = results["cancel_samples"]
    method = (
        "A fake OpenAI-compatible server (`benchmarks/programs/openai_sse_server.py`, a"
        " subprocess on 127.0.0.1, chunked `text/event-stream`) streams each answer on demand"
        f" and records time.perf_counter (CLOCK_MONOTONIC, system-wide, so comparable across"
        " processes) right before each chunk's `send`; the raw-pipe client (JSON lines on"
        " stdin; stdout read and timestamped line by line in one thread; no SDK client)"
        " timestamps the stdout line carrying that chunk's text (`TAG.i `) as it reads it."
        f" **Added latency** = read time - send time, per chunk: {n} timed prompts per series"
        f" of {chunks} chunks each, {interval:g} ms apart so they do not queue, alternated"
        " A B A B ... after one uncounted prompt each. It includes the TCP hop over loopback,"
        " the agent, the stdout pipe and the reader; the **floor** series"
        " (`benchmarks/programs/sse_relay_agent.py`: a blocking stdlib process that POSTs"
        " over a plain socket and writes one `agent_message_chunk` line per SSE `data:` event)"
        " has everything but the agent, so it shows how much of the figure is not acp-server's."
        f" acp-server runs `--model {PROVIDER_MODEL}` with OPENAI_BASE_URL pointing at the fake"
        " server (no API key, a temporary --data-dir and XDG_CONFIG_HOME). The target counts"
        " the whole figure (floor not subtracted). **Cancel**: the same acp-server process;"
        f" {samples} timed cancels after {WARMUP} uncounted ones; the server sends a chunk"
        f" every {PROVIDER_CANCEL_INTERVAL_MS:g} ms; after {PROVIDER_CANCEL_AFTER} chunks are"
        " read, time from right before writing `session/cancel` to (a) reading the prompt's"
        " response (`stopReason` must be `cancelled`) and (b) the server seeing the connection"
        " close (it waits in `select` on the socket between chunks, so it sees the FIN when it"
        f" arrives, not at its next write). With {samples} samples, p99 is the"
        f" {math.ceil(0.99 * samples)}th smallest (nearest rank)."
    )
    lines = [
        *render_header(results, method),
        "",
        "Added latency, SSE chunk sent -> its `agent_message_chunk` line read:",
        "",
        "| series | chunks timed | p50 ms | p90 ms | p99 ms | max ms | min ms | over 1 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in latency.items():
        lines.append(
            f"| {name} | {s['matched']:,} | {s['p50_ms']:.3f} | {s['p90_ms']:.3f}"
            f" | {s['p99_ms']:.3f} | {s['max_ms']:.3f} | {s['min_ms']:.3f}"
            f" | {s['over_1ms']} |"
        )
    subject, floor = latency[PROVIDER_SERIES], latency[RELAY_SERIES]
    lines += [
        "",
        "acp-server above the floor (differences of percentiles, context): p50"
        f" {subject['p50_ms'] - floor['p50_ms']:+.3f} ms, p90"
        f" {subject['p90_ms'] - floor['p90_ms']:+.3f} ms, p99"
        f" {subject['p99_ms'] - floor['p99_ms']:+.3f} ms. Chunks over 1 ms per timed prompt,"
        " in run order (the two series alternate, so the same position is moments apart; tails"
        " that line up are the machine's, not an agent's): "
        + "; ".join(f"{name} {s['over_1ms_per_prompt']}" for name, s in latency.items())
        + ".",
        "",
        f"Cancel while streaming ({samples} samples, acp-server):",
        "",
        "| from writing `session/cancel` to | p50 ms | p90 ms | p99 ms | max ms | min ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, key in (
        ("(a) reading the `cancelled` response", "response"),
        ("(b) the server seeing the connection close", "close"),
    ):
        s = cancel[key]
        lines.append(f"| {label} | {spread_cells(s)} |")
    lines += [
        "",
        f"Chunks the server sent after the cancel was written: at most"
        f" {cancel['sent_after_cancel_max']} in any sample.",
    ]
    lines += render_verdicts(results)
    for name, s in latency.items():
        if s["matched"] != s["sent"] or s["chunk_lines"] != s["sent"]:
            lines.append(
                f"- WARNING: {name}: {s['sent']} chunks sent, {s['chunk_lines']}"
                f" `agent_message_chunk` lines read, {s['matched']} matched"
            )
        if s["stop_reasons"] != ["end_turn"] or not s["all_complete"]:
            lines.append(
                f"- WARNING: {name}: stop reasons {s['stop_reasons']}, every answer sent whole:"
                f" {s['all_complete']}"
            )
    if cancel["cancelled"] != samples:
        lines.append(f"- WARNING: cancel: stop reasons {cancel['stop_reasons']}")
    if cancel["closed"] != samples:
        lines.append(
            f"- WARNING: cancel: the server saw the connection close in only"
            f" {cancel['closed']}/{samples} samples (the others count as infinite)"
        )
    lines += exit_warnings(results["exit_codes"])
    return "\n".join(lines) + "\n"


MODE = Mode(
    "provider",
    "Provider",
    "openai: SSE chunk -> agent_message_chunk added latency; cancel closes the stream",
    add_provider_args,
    mode_provider,
    render_provider,
)
