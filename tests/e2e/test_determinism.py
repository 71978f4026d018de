"""Deterministic mode (acp_server/determinism.py): sequential ids and a fake clock, requested by
flag or environment; and a file piped straight into acp-server, whose output and journal are
then byte-identical across runs.
"""

from __future__ import annotations

import calendar
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acp_server import determinism
from acp_server.ids import SequentialIds
from acp_server.session import records
from tests.support.agent_process import SERVER
from tests.support.scripted_model import script

REPO = Path(__file__).resolve().parents[2]
FIXTURE_COMMAND = [str(Path(sys.executable).parent / "acp-fixture")]  # the console script
EXAMPLES = sorted(
    path for path in REPO.glob("examples/*/*.jsonl") if not path.name.endswith(".golden.jsonl")
)

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


def test_sequential_ids_count_per_prefix() -> None:
    ids = SequentialIds()
    assert [ids("sess"), ids("turn"), ids("msg"), ids("msg"), ids("sess")] == [
        "sess_0001",
        "turn_0001",
        "msg_0001",
        "msg_0002",
        "sess_0002",
    ]


def test_sequential_ids_skip_reserved_ids() -> None:
    ids = SequentialIds()
    ids.reserve(["turn_0003", "msg_0007", "msg_0002", "call_x", "weird"])
    assert (ids("turn"), ids("msg"), ids("sess")) == ("turn_0004", "msg_0008", "sess_0001")


def test_the_clock_starts_in_2026_and_advances_a_millisecond_per_reading() -> None:
    records.set_clock(determinism.SteppingClock())
    try:
        stamps = [records.utc_now() for _ in range(3)]
    finally:
        records.set_clock(None)
    assert stamps == [
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.001Z",
        "2026-01-01T00:00:00.002Z",
    ]
    before = int(time.time())
    real = calendar.timegm(time.strptime(records.utc_now()[:19], "%Y-%m-%dT%H:%M:%S"))
    after = time.time()
    assert before <= real <= after, "set_clock(None) restores real time"


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        (False, {}, False),
        (True, {}, True),
        (False, {determinism.ENV_VAR: "1"}, True),
        (False, {determinism.ENV_VAR: "0"}, False),
        (False, {determinism.ENV_VAR: ""}, False),
    ],
)
def test_deterministic_mode_is_requested_by_the_flag_or_the_environment(
    flag: bool, env: dict[str, str], expected: bool
) -> None:
    assert determinism.requested(flag, env) is expected


# --- piping a file straight into acp-server -------------------------------------------------


def jsonl(*messages: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def new_session(cwd: Path, request_id: int = 1) -> dict[str, Any]:
    params = {"cwd": str(cwd), "mcpServers": []}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": params}


def prompt(text: str, request_id: int, session: str = "sess_0001") -> dict[str, Any]:
    params = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}


def pipe(
    tmp_path: Path,
    data: bytes,
    *args: str,
    env: dict[str, str] | None = None,
    from_file: bool = False,
    data_dir: Path | None = None,
) -> tuple[int, list[dict[str, Any]]]:
    """`acp-server ARGS < data`; returns the exit status and every frame written."""
    argv = [SERVER, "--data-dir", str(data_dir or tmp_path / "data"), *args]
    full_env = {**os.environ, **(env or {})}
    if from_file:
        source = tmp_path / "input.jsonl"
        source.write_bytes(data)
        with source.open("rb") as stdin:
            done = subprocess.run(
                argv, stdin=stdin, capture_output=True, env=full_env, timeout=30, check=False
            )
    else:
        done = subprocess.run(
            argv, input=data, capture_output=True, env=full_env, timeout=30, check=False
        )
    assert done.returncode == 0, done.stderr.decode()
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def responses(frames: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {f["id"]: f for f in frames if "method" not in f}


@pytest.mark.parametrize(
    ("how", "from_file"),
    [("flag", True), ("flag", False), ("env", True)],
    ids=["flag, stdin a file", "flag, stdin a pipe", "env, stdin a file"],
)
def test_a_piped_file_can_prompt_sess_0001_and_everything_is_answered(
    tmp_path: Path, how: str, from_file: bool
) -> None:
    args = ["--model", "echo"] + (["--deterministic"] if how == "flag" else [])
    env = {determinism.ENV_VAR: "1"} if how == "env" else None
    data = jsonl(INITIALIZE, new_session(tmp_path), prompt("hello piped world", 2))
    status, frames = pipe(tmp_path, data, *args, env=env, from_file=from_file)
    assert status == 0
    answered = responses(frames)
    assert sorted(answered) == [0, 1, 2]
    assert answered[1]["result"]["sessionId"] == "sess_0001"
    assert answered[2]["result"]["stopReason"] == "end_turn"
    chunks = [
        f["params"]["update"]["content"]["text"]
        for f in frames
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert chunks == ["hello ", "piped ", "world"]


@pytest.mark.parametrize("notices", [False, True], ids=["stderr client", "notices client"])
def test_deterministic_runs_say_nothing_of_the_sandbox(tmp_path: Path, notices: bool) -> None:
    # Sandboxed mode is never offered under --deterministic; that is by design, not a problem
    # of the machine, so neither stderr nor a notice-reading client is told about it.
    capabilities = {"session": {"notices": {}}} if notices else {}
    hello = {**INITIALIZE, "params": {"protocolVersion": 1, "clientCapabilities": capabilities}}
    argv = [SERVER, "--deterministic", "--model", "echo", "--data-dir", str(tmp_path / "d")]
    done = subprocess.run(
        argv,
        input=jsonl(hello, new_session(tmp_path)),
        capture_output=True,
        timeout=30,
        check=True,
    )
    frames = [json.loads(line) for line in done.stdout.splitlines()]
    modes = responses(frames)[1]["result"]["modes"]["availableModes"]
    assert "sandboxed" not in [mode["id"] for mode in modes]
    updates = [f["params"]["update"]["sessionUpdate"] for f in frames if "method" in f]
    assert "notice" not in updates
    assert b"andbox" not in done.stderr, done.stderr.decode()


def test_a_piped_cancel_after_a_prompt_answers_it_cancelled(tmp_path: Path) -> None:
    slow = script(tmp_path, [{"text": "tick ", "repeat": 200, "delay_ms": 50}])
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess_0001"}}
    data = jsonl(INITIALIZE, new_session(tmp_path), prompt("count", 2), cancel)
    _, frames = pipe(tmp_path, data, "--deterministic", "--model", slow)
    assert responses(frames)[2]["result"]["stopReason"] == "cancelled"
    assert frames[-1]["id"] == 2, "no update of the cancelled turn follows its response"


def test_at_eof_our_permission_request_fails_and_the_turn_goes_on(tmp_path: Path) -> None:
    writes = script(
        tmp_path,
        [{"tool_call": {"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}}],
        [{"text": "could not write"}],
    )
    data = jsonl(INITIALIZE, new_session(tmp_path), prompt("write x.txt", 2))
    _, frames = pipe(tmp_path, data, "--deterministic", "--model", writes)
    asked = [f for f in frames if f.get("method") == "session/request_permission"]
    # Whether the question is written depends on whether the agent has read the end of input
    # before it asks (after EOF a request to the client fails without being written): both are
    # right. What matters is that it is asked at most once and the turn goes on.
    assert len(asked) <= 1
    statuses = [
        f["params"]["update"].get("status")
        for f in frames
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "tool_call_update"
    ]
    assert statuses[-1] == "failed"
    assert responses(frames)[2]["result"]["stopReason"] == "end_turn"
    assert not (tmp_path / "x.txt").exists()


def per_session(stdout: bytes) -> dict[str, list[bytes]]:
    """The written lines, in order, per session. The two sessions' prompts run concurrently,
    so only the order within a session is deterministic; every line stays byte-for-byte."""
    owner_of_id = {0: "", 1: "sess_0001", 2: "sess_0001", 3: "sess_0002", 4: "sess_0002"}
    lines: dict[str, list[bytes]] = {}
    for line in stdout.splitlines():
        frame = json.loads(line)
        params = frame.get("params") or {}
        owner = params.get("sessionId") if "method" in frame else owner_of_id[frame["id"]]
        lines.setdefault(owner, []).append(line)
    return lines


def test_deterministic_output_and_journal_are_byte_identical_across_runs(tmp_path: Path) -> None:
    model = script(tmp_path, [{"thought": "hm"}, {"echo": True}])
    data = jsonl(
        INITIALIZE,
        new_session(tmp_path),
        prompt("first prompt", 2),
        new_session(tmp_path, 3),
        prompt("second prompt", 4, session="sess_0002"),
    )
    outputs = []
    for run in ("a", "b"):
        argv = [SERVER, "--deterministic", "--model", model, "--data-dir", str(tmp_path / run)]
        done = subprocess.run(argv, input=data, capture_output=True, timeout=30, check=True)
        journals = sorted((tmp_path / run / "sessions").glob("*.jsonl"))
        assert [j.name for j in journals] == ["sess_0001.jsonl", "sess_0002.jsonl"]
        outputs.append((per_session(done.stdout), [j.read_bytes() for j in journals]))
    assert outputs[0] == outputs[1]
    assert b'"at":"2026-01-01T00:00:00.' in outputs[0][1][0]


def test_a_second_process_skips_existing_session_ids_and_used_turn_ids(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = jsonl(INITIALIZE, new_session(tmp_path), prompt("one", 2))
    pipe(tmp_path, first, "--deterministic", "--model", "echo", data_dir=data_dir)
    load = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/load",
        "params": {"sessionId": "sess_0001", "cwd": str(tmp_path), "mcpServers": []},
    }
    second = jsonl(INITIALIZE, load, prompt("two", 2), new_session(tmp_path, 3))
    _, frames = pipe(tmp_path, second, "--deterministic", "--model", "echo", data_dir=data_dir)
    assert responses(frames)[3]["result"]["sessionId"] == "sess_0002"
    journal = (data_dir / "sessions" / "sess_0001.jsonl").read_text().splitlines()[1:]
    turn_ids = [json.loads(line)["turn_id"] for line in journal if '"turn/start"' in line]
    assert turn_ids == ["turn_0001", "turn_0002"]


def test_ordinary_runs_keep_random_ids(tmp_path: Path) -> None:
    data = jsonl(INITIALIZE, new_session(tmp_path), new_session(tmp_path, 2))
    _, frames = pipe(tmp_path, data, "--model", "echo")
    ids = [responses(frames)[i]["result"]["sessionId"] for i in (1, 2)]
    assert all(len(i) == len("sess_") + 24 for i in ids)
    assert ids[0] != ids[1]
