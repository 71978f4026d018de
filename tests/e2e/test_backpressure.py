"""A client that floods requests but never reads our output: the agent's memory stays bounded
and, once the client reads again, every request is answered exactly once.

Through the real process over raw pipes (the SDK client always reads, so it cannot play this
client). Memory is the kernel's high-water mark of the agent's resident set (VmHWM).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.agent_process import SERVER
from tests.support.wire import validate_agent_frame

REQUESTS = 40_000
"""Enough that holding every answer (about 340 bytes each, plus the task waiting to queue it,
about 6 KiB in all per request) takes over 200 MiB: the agent before backpressure peaked at
530 MiB after reading 86,000 such requests."""

PEAK_BOUND_MIB = 100
"""What the agent may reach: its idle footprint (about 35 MiB) plus the write queue's
high-water mark (4 MiB of encoded frames), with a wide margin for the interpreter's heap and
one input line buffer (the agent with backpressure peaked at 36 MiB here)."""

VALIDATE_EVERY = 997
"""Schema-check every this-many-th answer (and the first ones): jsonschema on all of them
would take minutes."""

STALLED_S = 2.0
"""How long the client's writes must make no progress before we call the agent pushed back."""


def request(request_id: int) -> bytes:
    return (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            }
        ).encode()
        + b"\n"
    )


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's")
def test_a_client_that_never_reads_cannot_grow_the_agent_and_gets_every_answer_later(
    tmp_path: Path,
) -> None:
    agent = subprocess.Popen(
        [SERVER, "--model", "echo", "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert agent.stdin is not None and agent.stdout is not None
    written = 0
    progress = threading.Event()

    def flood() -> None:
        nonlocal written
        assert agent.stdin is not None
        for request_id in range(REQUESTS):
            agent.stdin.write(request(request_id))
            written += 1
            progress.set()
        agent.stdin.close()

    writer = threading.Thread(target=flood, daemon=True)
    try:
        writer.start()
        # Wait until the client is done or its writes stall (the agent stopped reading).
        while writer.is_alive():
            progress.clear()
            if not progress.wait(STALLED_S):
                break
        written_by_the_stall = written
        peak = peak_rss_mib(agent.pid)

        answered: dict[int, int] = {}
        for count, line in enumerate(agent.stdout):  # reading again: everything comes through
            frame = json.loads(line)
            if count < 10 or count % VALIDATE_EVERY == 0:
                validate_agent_frame(frame, "initialize")
            answered[frame["id"]] = answered.get(frame["id"], 0) + 1
        writer.join(timeout=60)
        assert agent.wait(timeout=30) == 0
    finally:
        if agent.poll() is None:
            agent.kill()
        agent.wait()
        agent.stdout.close()

    assert written_by_the_stall < REQUESTS, "the agent read the whole flood without pushing back"
    assert peak < PEAK_BOUND_MIB, f"peak RSS {peak:.1f} MiB with a client that never reads"
    assert len(answered) == REQUESTS and set(answered.values()) == {1}
