"""Ready before the runtime (issue 26), through the real process on raw pipes: `session/new` is
answered before the runtime is imported, and a prompt or a cancel that arrives while it loads
(pipelined right behind `session/new`) behaves exactly as it does later.
See docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from tests.support.agent_process import SERVER
from tests.support.wire import validate_agent_frame

pytestmark = pytest.mark.anyio

DEADLINE = 30.0


class RawClient:
    """The agent on raw pipes: lines written as given (pipelined), frames read in order."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.frames: list[dict[str, Any]] = []
        self._methods: dict[int, str] = {}
        self._buffer = b""

    async def send(self, *messages: dict[str, Any]) -> None:
        """Write every message in one write: each arrives while the previous is handled."""
        for message in messages:
            if "id" in message:
                self._methods[message["id"]] = message["method"]
        assert self.process.stdin is not None
        await self.process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    async def response(self, request_id: int) -> dict[str, Any]:
        """Read frames until the answer to `request_id`."""
        with anyio.fail_after(DEADLINE):
            while True:
                for frame in self.frames:
                    if frame.get("id") == request_id and "method" not in frame:
                        return frame
                await self._read()

    async def _read(self) -> None:
        assert self.process.stdout is not None
        self._buffer += await self.process.stdout.receive()
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            frame: dict[str, Any] = json.loads(line)
            method = None if "method" in frame else self._methods.get(frame.get("id", -1))
            validate_agent_frame(frame, method)
            self.frames.append(frame)

    def updates_of(self, session_id: str) -> list[dict[str, Any]]:
        return [
            f["params"]["update"]
            for f in self.frames
            if f.get("method") == "session/update" and f["params"]["sessionId"] == session_id
        ]


def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def prompt(request_id: int, session_id: str, text: str) -> dict[str, Any]:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    return request(request_id, "session/prompt", params)


def cancel(session_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}


INITIALIZE = request(0, "initialize", {"protocolVersion": 1})


async def serve(
    tmp_path: Path,
    model: str,
    *extra: str,
    stderr: Any = None,
    env: dict[str, str] | None = None,
    deterministic: bool = True,
) -> Process:
    argv = [SERVER, *(["--deterministic"] if deterministic else [])]
    argv += ["--model", model, "--data-dir", str(tmp_path / "d")]
    return await anyio.open_process(
        [*argv, *extra], stderr=stderr, env={**os.environ, **(env or {})}
    )


def slow_script(tmp_path: Path) -> str:
    path = tmp_path / "slow.json"
    path.write_text(
        json.dumps({"responses": [[{"text": "tick ", "repeat": 100000, "delay_ms": 5}]]})
    )
    return f"script:{path}"


async def finish(process: Process) -> None:
    assert process.stdin is not None
    await process.stdin.aclose()
    with anyio.fail_after(DEADLINE):
        assert await process.wait() == 0


async def test_a_prompt_and_a_cancel_pipelined_behind_session_new_behave_as_later(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    cwd = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    process = await serve(tmp_path, slow_script(tmp_path))
    client = RawClient(process)
    # During the warm-up: the prompt and the cancel are read while the runtime loads.
    await client.send(
        INITIALIZE,
        request(1, "session/new", cwd),
        prompt(2, "sess_0001", "go"),
        cancel("sess_0001"),
    )
    early = await client.response(2)
    # Later: the runtime is loaded (session/list waits for it), then the same again.
    await client.send(request(3, "session/list", {}))
    await client.response(3)
    await client.send(request(4, "session/new", cwd))
    assert (await client.response(4))["result"]["sessionId"] == "sess_0002"
    await client.send(prompt(5, "sess_0002", "go"), cancel("sess_0002"))
    later = await client.response(5)
    await finish(process)

    assert early["result"]["stopReason"] == later["result"]["stopReason"] == "cancelled"
    for session_id, answer in (("sess_0001", early), ("sess_0002", later)):
        # Nothing of the session before its session/new answer; nothing of the turn after
        # its answer; the same kinds of updates either way.
        kinds = [u["sessionUpdate"] for u in client.updates_of(session_id)]
        assert kinds[0] == "available_commands_update", kinds
        assert set(kinds[1:]) <= {"agent_message_chunk", "session_info_update"}, kinds
        after = client.frames[client.frames.index(answer) :]
        assert not [f for f in after if f.get("params", {}).get("sessionId") == session_id]
    new_answer = next(f for f in client.frames if f.get("id") == 1 and "result" in f)
    first_update = next(f for f in client.frames if f.get("method") == "session/update")
    assert client.frames.index(new_answer) < client.frames.index(first_update)


async def test_a_prompt_right_behind_session_new_is_answered_like_the_next_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    cwd = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    process = await serve(tmp_path, "echo")
    client = RawClient(process)
    # Two sessions answered during the warm-up; both are wired by it.
    await client.send(
        INITIALIZE,
        request(1, "session/new", cwd),
        request(2, "session/new", cwd),
        prompt(3, "sess_0002", "one two three"),
    )
    first = await client.response(3)
    await client.send(prompt(4, "sess_0002", "one two three"), prompt(5, "sess_0001", "four"))
    second = await client.response(4)
    other = await client.response(5)
    await finish(process)

    assert [first["result"]["stopReason"], second["result"]["stopReason"]] == ["end_turn"] * 2
    assert other["result"]["stopReason"] == "end_turn"

    def text(session_id: str) -> str:
        updates = client.updates_of(session_id)
        return "".join(
            u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
        )

    assert text("sess_0002") == "one two three" * 2
    assert text("sess_0001") == "four"


async def test_cancel_with_nothing_running_during_warm_up_is_a_no_op(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    cwd = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    process = await serve(tmp_path, "echo")
    client = RawClient(process)
    await client.send(
        INITIALIZE,
        request(1, "session/new", cwd),
        cancel("sess_0001"),
        prompt(2, "sess_0001", "still here"),
    )
    answer = await client.response(2)
    await finish(process)
    assert answer["result"]["stopReason"] == "end_turn"


async def test_session_new_is_answered_before_the_runtime_is_imported(tmp_path: Path) -> None:
    """`python -X importtime` writes each import to stderr as it completes, in the same stream
    as the log: the session is created (its answer is next) before the runtime is imported."""
    (tmp_path / "ws").mkdir()
    cwd = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        process = await serve(
            tmp_path,
            "echo",
            "--log-level",
            "info",
            stderr=stderr,
            env={"PYTHONPROFILEIMPORTTIME": "1"},
        )
    client = RawClient(process)
    await client.send(INITIALIZE, request(1, "session/new", cwd))
    await client.response(1)
    await client.send(prompt(2, "sess_0001", "hi"))
    await client.response(2)
    await finish(process)

    lines = log.read_text().splitlines()
    created = next(i for i, line in enumerate(lines) if "session sess_0001 created" in line)

    def imported(*modules: str) -> int:
        """The first line that logs one of `modules`."""
        names = "|".join(re.escape(module) for module in modules)
        pattern = re.compile(rf"^import time:.*\|\s*(?:{names})$")
        return next(i for i, line in enumerate(lines) if pattern.match(line))

    # `acp_server.agent` itself is imported by the CLI (the config file's TurnLimits and
    # InstructionSettings live there); its names, the loop among them, load on first use,
    # through importlib, whose top module -X importtime does not log: the loop's own line is
    # there only when a plain import loads it first, so the runtime counts from the first of
    # its modules that is logged.
    assert imported("acp_server.agent.loop", "acp_server.agent.model_step") > created
    assert imported("acp_server.tools.builtin") > created


# The config file's section owners and what only they import: the CLI reads every section
# through its settings module (agent/settings.py, agent/instruction_settings.py,
# tools/budget.py, tools/sandbox_settings.py, tools/web_access.py, tools/skill_places.py,
# models/providers.py) and names the modes through tools/modes.py; the owners load in the
# warm-up, the files' readers with the slash-command scan right after the answer.
NOT_BEFORE_READY = (
    "acp_server.agent.instructions",
    "acp_server.models.budget",
    "acp_server.models.http",
    "acp_server.tools.base",
    "acp_server.tools.command_sandbox",
    "acp_server.tools.custom_commands",
    "acp_server.tools.permissions",
    "acp_server.tools.repo_files",
    "acp_server.tools.workspace",
)
READ_BEFORE_READY = (
    "acp_server.agent.instruction_settings",
    "acp_server.agent.settings",
    "acp_server.tools.budget",
    "acp_server.tools.modes",
    "acp_server.tools.sandbox_settings",
)

EVERY_SECTION = """\
max_steps = 50
context_threshold = 0.7
[subagents]
max_depth = 1
[providers.openai]
base_url = "http://127.0.0.1:9/v1"
[tools]
max_result_bytes = 32768
[instructions]
files = ["AGENTS.md"]
[sandbox]
network = false
[web_fetch]
timeout = 5
[skills]
dirs = [".agents/skills"]
"""


async def test_a_config_file_is_read_without_its_sections_owners_before_session_new_is_answered(
    tmp_path: Path,
) -> None:
    """Every section of the file is read and checked at startup (a bad one still stops the
    process there: tests/firstrun/test_configfile.py), but by its settings module alone."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "config" / "acp-server").mkdir(parents=True)
    (tmp_path / "config" / "acp-server" / "config.toml").write_text(EVERY_SECTION)
    cwd = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    log = tmp_path / "stderr.txt"
    env = {"PYTHONPROFILEIMPORTTIME": "1", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    with log.open("wb") as stderr:
        process = await serve(tmp_path, "echo", "--log-level", "info", stderr=stderr, env=env)
    client = RawClient(process)
    await client.send(INITIALIZE, request(1, "session/new", cwd))
    await client.response(1)
    await client.send(prompt(2, "sess_0001", "hi"))  # waits for the warm-up, then runs
    assert (await client.response(2))["result"]["stopReason"] == "end_turn"
    await finish(process)

    lines = log.read_text().splitlines()
    created = next(i for i, line in enumerate(lines) if "session sess_0001 created" in line)

    def modules(part: list[str]) -> set[str]:
        return {line.rsplit("|", 1)[1].strip() for line in part if line.startswith("import time:")}

    before, after = modules(lines[:created]), modules(lines[created:])
    assert set(READ_BEFORE_READY) <= before, set(READ_BEFORE_READY) - before
    assert not before & set(NOT_BEFORE_READY), before & set(NOT_BEFORE_READY)
    # The owners do load, once the session is answered.
    assert {"acp_server.agent.instructions", "acp_server.tools.permissions"} <= after


# Imported by nothing an idle session does (figures: the ready-before-the-runtime RFC):
# jsonrpcserver (the tests' reference, no longer in the agent's run path: the json-rpc peer
# RFC), its oslash, and the jsonschema validator and HTTP server of its package `__init__`; the
# package file list (`importlib.metadata`, and the `email` package it needs) read when ripgrep
# first runs; the cookie jar and HTML parser of web_fetch, imported when it first fetches.
NOT_IMPORTED_WHEN_IDLE = (
    "jsonrpcserver",
    "oslash",
    "jsonschema",
    "attrs",
    "http.server",
    "importlib.metadata",
    "email",
    "http.cookiejar",
    "html.parser",
)


async def test_an_idle_session_after_its_first_prompt_has_not_imported_what_it_does_not_use(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    cwd = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        process = await serve(tmp_path, "echo", stderr=stderr, env={"PYTHONPROFILEIMPORTTIME": "1"})
    client = RawClient(process)
    await client.send(INITIALIZE, request(1, "session/new", cwd))
    await client.response(1)
    await client.send(prompt(2, "sess_0001", "hi"))  # waits for the warm-up, then runs
    assert (await client.response(2))["result"]["stopReason"] == "end_turn"
    await client.send(request(3, "session/list", {}))
    await client.response(3)
    await finish(process)

    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in log.read_text().splitlines()
        if line.startswith("import time:")
    }
    assert "acp_server.tools.builtin.web" in imported
    assert not imported & set(NOT_IMPORTED_WHEN_IDLE), imported & set(NOT_IMPORTED_WHEN_IDLE)


async def test_the_sandbox_probe_runs_at_start_up_before_initialize(tmp_path: Path) -> None:
    """The bwrap probe starts while the bridge is imported, before anything is read: a fake
    `bwrap` first on PATH notes each run. It has run before `initialize` is sent, once, and the
    first session's answer is the probe's (sandboxed mode offered: the fake works)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "bin").mkdir()
    marker = tmp_path / "probed"
    fake = tmp_path / "bin" / "bwrap"
    fake.write_text(f"#!/bin/sh\necho run >> {marker}\nexit 0\n")
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    process = await serve(tmp_path, "echo", env=env, deterministic=False)  # it never probes
    client = RawClient(process)
    with anyio.fail_after(DEADLINE):
        while not marker.exists():  # noqa: ASYNC110 - another process's file
            await anyio.sleep(0.02)
    cwd = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    await client.send(INITIALIZE, request(1, "session/new", cwd))
    answer = await client.response(1)
    await finish(process)
    modes = [mode["id"] for mode in answer["result"]["modes"]["availableModes"]]
    assert "sandboxed" in modes, modes
    assert marker.read_text() == "run\n"
