"""The official TypeScript SDK's ACP v2 client, driving the real `acp-server` process
(tests/e2e/v2client: a committed package-lock.json, and `driver.mjs`, which runs a list of
steps and reports every frame and every SDK outcome as JSON lines).

The package is installed with `npm ci` once per checkout: the lock's hash is stamped into
node_modules after a successful install, and the install runs under a file lock, so parallel
test processes (pytest-xdist workers, other checkouts' runs are separate directories) neither
race nor install twice. Node and npm are required: if either is missing or `npm ci` fails, the
tests that drive the client fail with npm's output (the v2 client is part of what issue 32's
"done" means), they are not skipped.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from .agent_process import SERVER
from .wire_v2 import validate_agent_frame_v2

CLIENT = Path(__file__).resolve().parents[1] / "e2e" / "v2client"
STAMP = CLIENT / "node_modules" / ".acp-server-lock-sha256"
DEADLINE = 120.0
"""Generous: only there so a broken agent fails a test instead of hanging the suite."""


def install_client() -> Path:
    """The driver script, its package installed exactly as locked."""
    wanted = hashlib.sha256((CLIENT / "package-lock.json").read_bytes()).hexdigest()
    with open(CLIENT / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (STAMP.exists() and STAMP.read_text() == wanted):
            done = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
                cwd=CLIENT,
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
            STAMP.write_text(wanted)
    return CLIENT / "driver.mjs"


@dataclass
class Run:
    """What one run of the driver reported."""

    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def agent_pid(self) -> int:
        return int(next(r["agent_pid"] for r in self.records if "agent_pid" in r))

    def frames(self, direction: str = "a2c") -> list[dict[str, Any]]:
        return [r["frame"] for r in self.records if r.get("dir") == direction]

    def steps(self, name: str) -> list[dict[str, Any]]:
        """The SDK's outcomes of one step, in order."""
        return [r for r in self.records if r.get("sdk") == name]

    def delivered(self) -> list[str]:
        return [r["delivered"] for r in self.records if "delivered" in r]

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            f["params"]["update"]
            for f in self.frames()
            if f.get("method") == "session/update"
            and (session_id is None or f["params"]["sessionId"] == session_id)
        ]

    def check(self) -> None:
        """The run ended well: every step the SDK took succeeded, it dropped no frame, the
        agent exited 0, and every frame the agent wrote is valid v2."""
        failed = [r for r in self.records if r.get("ok") is False]
        assert failed == [], failed
        assert [r for r in self.records if "sdk_log" in r] == []
        assert {"done": True} in self.records, self.records[-3:]
        exits = [r["agent_exit"] for r in self.records if "agent_exit" in r]
        assert exits == [{"code": 0, "signal": None}], exits
        methods = {f["id"]: f["method"] for f in self.frames("c2a") if "id" in f and "method" in f}
        for frame in self.frames():
            answered = None if "method" in frame else methods.get(frame.get("id"))
            validate_agent_frame_v2(frame, answered)


async def drive(cwd: Path, steps: list[str], *agent_args: str) -> Run:
    """Run the SDK's v2 client through `steps` (see driver.mjs) against `acp-server
    AGENT_ARGS` started in this environment; what it reported."""
    script = await anyio.to_thread.run_sync(install_client)
    command = ["node", str(script), "--cwd", str(cwd)]
    for step in steps:
        command += ["--step", step]
    command += ["--", SERVER, *agent_args]
    run = Run()
    with anyio.fail_after(DEADLINE):
        async with await anyio.open_process(command, env=dict(os.environ), stderr=None) as process:
            assert process.stdout is not None
            buffer = b""
            async for data in process.stdout:
                buffer += data
                *lines, buffer = buffer.split(b"\n")
                run.records.extend(json.loads(line) for line in lines if line.strip())
            await process.wait()
    return run
