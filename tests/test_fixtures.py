"""Fixtures: deterministic mode, a file piped into acp-server, the fixture runner, the examples.

Every example under examples/*/ (each NAME.jsonl next to its NAME.golden.jsonl) is run against
the real server and compared with its golden transcript; `uv run scripts/fixture run FILE
--update` rewrites one after an intended change.
"""

from __future__ import annotations

import calendar
import difflib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acp_fixture import FixtureError, RunOptions, parse_fixture, run_fixture
from acp_fixture.cli import golden_path
from acp_server import determinism
from acp_server.ids import SequentialIds
from acp_server.session import records
from tests.support.agent_process import SERVER

REPO = Path(__file__).resolve().parents[1]
FIXTURE_COMMAND = [sys.executable, str(REPO / "scripts" / "fixture")]
EXAMPLES = sorted(
    path for path in REPO.glob("examples/*/*.jsonl") if not path.name.endswith(".golden.jsonl")
)

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


# --- the examples ---------------------------------------------------------------------------


def test_the_tour_is_an_example() -> None:
    assert REPO / "examples" / "tour" / "tour.jsonl" in EXAMPLES


@pytest.mark.parametrize("fixture", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_matches_its_golden_transcript(fixture: Path) -> None:
    golden = golden_path(fixture)
    assert golden.exists(), f"{fixture} has no golden file {golden.name}"
    transcript = run_fixture(parse_fixture(fixture))
    expected = golden.read_text(encoding="utf-8")
    if transcript != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            transcript.splitlines(keepends=True),
            fromfile=str(golden),
            tofile="this run",
        )
        rel = fixture.relative_to(REPO)
        pytest.fail(
            "".join(diff)
            + f"\nIf the change is intended: uv run scripts/fixture run {rel} --update"
        )


# --- deterministic mode ---------------------------------------------------------------------


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
    real = calendar.timegm(time.strptime(records.utc_now()[:19], "%Y-%m-%dT%H:%M:%S"))
    assert abs(real - time.time()) < 60, "set_clock(None) restores real time"


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


def write_script(tmp_path: Path, *responses: list[dict[str, Any]], name: str = "model") -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"responses": list(responses)}), encoding="utf-8")
    return f"script:{path}"


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
    assert answered[2]["result"] == {"stopReason": "end_turn"}
    chunks = [
        f["params"]["update"]["content"]["text"]
        for f in frames
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert chunks == ["hello ", "piped ", "world"]


def test_a_piped_cancel_after_a_prompt_answers_it_cancelled(tmp_path: Path) -> None:
    slow = write_script(tmp_path, [{"text": "tick ", "repeat": 200, "delay_ms": 50}])
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess_0001"}}
    data = jsonl(INITIALIZE, new_session(tmp_path), prompt("count", 2), cancel)
    _, frames = pipe(tmp_path, data, "--deterministic", "--model", slow)
    assert responses(frames)[2]["result"] == {"stopReason": "cancelled"}
    assert frames[-1]["id"] == 2, "no update of the cancelled turn follows its response"


def test_at_eof_our_permission_request_fails_and_the_turn_goes_on(tmp_path: Path) -> None:
    writes = write_script(
        tmp_path,
        [{"tool_call": {"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}}],
        [{"text": "could not write"}],
    )
    data = jsonl(INITIALIZE, new_session(tmp_path), prompt("write x.txt", 2))
    _, frames = pipe(tmp_path, data, "--deterministic", "--model", writes)
    asked = [f for f in frames if f.get("method") == "session/request_permission"]
    assert len(asked) == 1
    statuses = [
        f["params"]["update"].get("status")
        for f in frames
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "tool_call_update"
    ]
    assert statuses[-1] == "failed"
    assert responses(frames)[2]["result"] == {"stopReason": "end_turn"}
    assert not (tmp_path / "x.txt").exists()


def test_deterministic_output_and_journal_are_byte_identical_across_runs(tmp_path: Path) -> None:
    model = write_script(tmp_path, [{"thought": "hm"}, {"echo": True}])
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
        outputs.append((done.stdout, [j.read_bytes() for j in journals]))
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


# --- the fixture runner ---------------------------------------------------------------------


def write_fixture(
    tmp_path: Path, *lines: dict[str, Any] | str, header: dict[str, Any] | None = None
) -> Path:
    path = tmp_path / "case.jsonl"
    text = [json.dumps({"fixture": header})] if header is not None else []
    text += [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def run_cli(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FIXTURE_COMMAND, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def entries(transcript: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in transcript.splitlines()]


def sent(transcript: str, by: str | None = None) -> list[dict[str, Any]]:
    return [e["send"] for e in entries(transcript) if "send" in e and e.get("by") == by]


def received(transcript: str) -> list[dict[str, Any]]:
    return [e["recv"] for e in entries(transcript) if "recv" in e]


def updates(transcript: str, kind: str) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in received(transcript)
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == kind
    ]


HANDSHAKE: list[dict[str, Any] | str] = [
    {"send": {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}},
    {"wait": "response"},
    {
        "send": {
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "${workspace}", "mcpServers": []},
        }
    },
    {"wait": "response"},
]


def prompt_step(text: str, request_id: int) -> dict[str, Any]:
    params = {"sessionId": "${session}", "prompt": [{"type": "text", "text": text}]}
    return {"send": {"id": request_id, "method": "session/prompt", "params": params}}


def test_two_runs_of_the_tour_give_byte_identical_transcripts() -> None:
    tour = parse_fixture(REPO / "examples" / "tour" / "tour.jsonl")
    first, second = run_fixture(tour), run_fixture(tour)
    assert first == second
    assert '"sessionId":"sess_0001"' in first
    assert "/tmp" not in first and "acp-fixture-" not in first


def test_update_writes_the_golden_file_then_the_run_matches(tmp_path: Path) -> None:
    fixture = write_fixture(tmp_path, *HANDSHAKE, header={"model": "echo"})
    missing = run_cli("run", fixture)
    assert missing.returncode == 2
    assert "--update" in missing.stderr

    updated = run_cli("run", fixture, "--update")
    assert updated.returncode == 0, updated.stderr
    golden = tmp_path / "case.golden.jsonl"
    assert updated.stdout.startswith(f"updated {golden}")
    assert entries(golden.read_text())[-1] == {"exit": 0}

    matched = run_cli("run", fixture)
    assert matched.returncode == 0, matched.stdout + matched.stderr
    assert matched.stdout.startswith(f"OK: {fixture} matches {golden}")


def test_a_mismatch_prints_a_unified_diff_and_exits_1(tmp_path: Path) -> None:
    fixture = write_fixture(
        tmp_path, *HANDSHAKE, prompt_step("hi there", 2), header={"model": "echo"}
    )
    golden = tmp_path / "expected.jsonl"
    assert run_cli("run", fixture, "--golden", golden, "--update").returncode == 0
    original = golden.read_text()
    golden.write_text(original.replace('"text":"there"', '"text":"where"'))

    result = run_cli("run", fixture, "--golden", golden)
    assert result.returncode == 1
    assert f"--- {golden}" in result.stdout
    assert '-{"recv"' in result.stdout and '"text":"where"' in result.stdout
    assert '+{"recv"' in result.stdout and '"text":"there"' in result.stdout
    assert "FAIL:" in result.stdout and "--update" in result.stdout

    rewritten = run_cli("run", fixture, "--golden", golden, "--update")
    assert rewritten.returncode == 0
    assert golden.read_text() == original


def test_output_records_a_transcript_without_a_golden_file(tmp_path: Path) -> None:
    fixture = write_fixture(tmp_path, *HANDSHAKE, header={"model": "echo"})
    result = run_cli("run", fixture, "--output", "-")
    assert result.returncode == 0, result.stderr
    assert entries(result.stdout)[0]["start"][:1] == ["--deterministic"]
    assert not (tmp_path / "case.golden.jsonl").exists()


def test_substitution_of_the_session_saved_values_and_the_workspace(tmp_path: Path) -> None:
    fixture = write_fixture(
        tmp_path,
        {"send": {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}},
        {"wait": "response", "save": {"version": "result.protocolVersion"}},
        *HANDSHAKE[2:],
        {"send": {"id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}},
        {"wait": "response", "save": {"other": "result.sessionId"}},
        prompt_step("v${version} in ${workspace} for ${other} costs $$5", 3),
        {"wait": "all"},
        header={"model": "echo"},
    )
    transcript = run_fixture(parse_fixture(fixture))
    prompts = [m for m in sent(transcript) if m.get("method") == "session/prompt"]
    assert prompts[0]["params"]["sessionId"] == "sess_0002", "${session}: the latest session/new"
    text = prompts[0]["params"]["prompt"][0]["text"]
    assert text == "v1 in ${workspace} for sess_0002 costs $5"
    new_sessions = [m for m in sent(transcript) if m.get("method") == "session/new"]
    assert new_sessions[0]["params"]["cwd"] == "${workspace}"


def test_an_unset_variable_names_the_line(tmp_path: Path) -> None:
    fixture = write_fixture(
        tmp_path, *HANDSHAKE[:2], prompt_step("hi", 2), header={"model": "echo"}
    )
    with pytest.raises(FixtureError, match=r"case\.jsonl:4: \$\{session\} is not set yet"):
        run_fixture(parse_fixture(fixture))


WRITE_TWICE = (
    [{"tool_call": {"name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}}],
    [{"text": "after"}],
)


@pytest.mark.parametrize(
    ("policy", "option", "written", "asked"),
    [
        ("allow_once", "allow_once", True, 2),
        ("reject_once", "reject_once", False, 2),
        ("allow_always", "allow_always", True, 1),
        ("reject_always", "reject_always", False, 1),
        ("cancelled", None, False, 2),
    ],
)
def test_the_permission_policy_answers_permission_requests(
    tmp_path: Path, policy: str, option: str | None, written: bool, asked: int
) -> None:
    model = write_script(tmp_path, *WRITE_TWICE)
    fixture = write_fixture(
        tmp_path,
        {"permissions": policy},
        *HANDSHAKE,
        prompt_step("write it", 2),
        {"wait": "response"},
        prompt_step("again", 3),
        {"wait": "response"},
        {"show_file": "out.txt"},
        header={"model": model},
    )
    transcript = run_fixture(parse_fixture(fixture))
    answers = sent(transcript, by=f"permissions {policy}")
    assert len(answers) == asked
    expected = {"outcome": "selected", "optionId": option} if option else {"outcome": "cancelled"}
    assert all(a["result"]["outcome"] == expected for a in answers)
    final = [u["status"] for u in updates(transcript, "tool_call_update") if "content" in u]
    assert final == ["completed" if written else "failed"] * 2
    shown = entries(transcript)[-2]
    assert shown == (
        {"file": "out.txt", "content": "x"} if written else {"file": "out.txt", "missing": True}
    )
    stops = [f["result"]["stopReason"] for f in received(transcript) if f.get("id") in (2, 3)]
    assert stops == ["end_turn", "end_turn"]


def test_cancel_after_updates_sends_session_cancel_after_the_nth_turn_update(
    tmp_path: Path,
) -> None:
    model = write_script(
        tmp_path,
        [{"thought": "t"}, {"text": "a"}, {"text": "b"}, {"delay_ms": 60_000}, {"text": "z"}],
    )
    fixture = write_fixture(
        tmp_path,
        *HANDSHAKE,
        {"cancel_after_updates": 3},
        prompt_step("go", 2),
        {"wait": "response"},
        header={"model": model, "timeout": 20},
    )
    transcript = run_fixture(parse_fixture(fixture))
    lines = entries(transcript)
    cancel_at = next(i for i, e in enumerate(lines) if e.get("by") == "cancel_after_updates")
    assert lines[cancel_at]["send"] == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "sess_0001"},
    }
    before = [
        e["recv"]["params"]["update"]["sessionUpdate"]
        for e in lines[:cancel_at]
        if "recv" in e and e["recv"].get("method") == "session/update"
    ]
    # Session-level updates (commands, title) are not counted; the turn's three are.
    assert before[-3:] == ["agent_thought_chunk", "agent_message_chunk", "agent_message_chunk"]
    assert "available_commands_update" in before
    assert {"recv": {"jsonrpc": "2.0", "result": {"stopReason": "cancelled"}, "id": 2}} in lines


def test_restart_starts_a_new_server_on_the_same_data(tmp_path: Path) -> None:
    fixture = write_fixture(
        tmp_path,
        *HANDSHAKE,
        prompt_step("remember me", 2),
        {"wait": "response"},
        {"restart": True},
        {"send": {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}},
        {"wait": "response"},
        {
            "send": {
                "id": 1,
                "method": "session/load",
                "params": {"sessionId": "${session}", "cwd": "${workspace}", "mcpServers": []},
            }
        },
        header={"model": "echo"},
    )
    transcript = run_fixture(parse_fixture(fixture))
    kinds = [next(iter(e)) for e in entries(transcript)]
    assert kinds.count("start") == 2 and kinds.count("exit") == 2
    assert kinds.index("exit") < len(kinds) - 1
    replayed = updates(transcript, "user_message_chunk")
    assert [u["content"]["text"] for u in replayed] == ["remember me"]


def test_client_file_requests_are_served_from_disk_and_terminals_refused(tmp_path: Path) -> None:
    model = write_script(
        tmp_path,
        [{"tool_call": {"name": "read_file", "arguments": {"path": "in.txt"}}}],
        [{"tool_call": {"name": "bash", "arguments": {"command": "true"}}}],
        [{"text": "done"}],
    )
    capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
    init_params = {"protocolVersion": 1, "clientCapabilities": capabilities}
    fixture = write_fixture(
        tmp_path,
        {"permissions": "allow_once"},
        {"send": {"id": 0, "method": "initialize", "params": init_params}},
        *HANDSHAKE[1:],
        prompt_step("read in.txt", 2),
        {"wait": "response"},
        header={"model": model, "files": {"in.txt": "from the workspace\n"}},
    )
    transcript = run_fixture(parse_fixture(fixture))
    fs_answers = sent(transcript, by="fs")
    assert fs_answers[0]["result"] == {"content": "from the workspace\n"}
    refused = sent(transcript, by="runner")
    assert refused and refused[0]["error"]["code"] == -32601


def test_send_raw_and_bare_json_rpc_lines(tmp_path: Path) -> None:
    fixture = write_fixture(
        tmp_path,
        json.dumps(INITIALIZE),
        {"wait": "response"},
        {"send_raw": "{not json"},
        {"note": "a note is copied"},
        header={"model": "echo"},
    )
    lines = entries(run_fixture(parse_fixture(fixture)))
    assert lines[1] == {"send": INITIALIZE}
    assert {"send_raw": "{not json"} in lines
    assert {"note": "a note is copied"} in lines
    parse_errors = [e for e in lines if e.get("recv", {}).get("error", {}).get("code") == -32700]
    assert len(parse_errors) == 1


def test_a_timeout_fails_the_run_with_the_server_stderr(tmp_path: Path) -> None:
    model = write_script(tmp_path, [{"delay_ms": 60_000}])
    fixture = write_fixture(
        tmp_path, *HANDSHAKE, prompt_step("wait", 2), {"wait": "response"}, header={"model": model}
    )
    result = run_cli("run", fixture, "--output", "-", "--timeout", "1", "--", "--log-level", "info")
    assert result.returncode == 2
    assert "case.jsonl:7: timed out after 1 s waiting for the response to session/prompt" in (
        result.stderr
    )
    assert "acp-server stderr" in result.stderr


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2]", "case.jsonl:1: each line must be a JSON object"),
        ('{"sned": {}}', "case.jsonl:1: unknown directive 'sned'"),
        ('{"wait": "forever"}', 'case.jsonl:1: wait takes "response", "all"'),
        ('{"permissions": "maybe"}', "case.jsonl:1: permission policy must be one of"),
        ('{"cancel_after_updates": -1}', "case.jsonl:1: cancel_after_updates takes a count"),
        ('{"send": {"id": 1}}', "case.jsonl:1: send takes a message with a method"),
        ("{nope", "case.jsonl:1: not JSON"),
        ('{"fixture": {"modle": "echo"}}', "case.jsonl:1: unknown keys ['modle']"),
    ],
)
def test_an_invalid_fixture_is_refused_naming_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    fixture = write_fixture(tmp_path, line)
    with pytest.raises(FixtureError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_fixture(fixture)
    result = run_cli("run", fixture, "--output", "-")
    assert result.returncode == 2
    assert message in result.stderr


def test_model_override_is_relative_to_the_cwd_and_shown_relative_to_the_fixture(
    tmp_path: Path,
) -> None:
    (tmp_path / "models").mkdir()
    write_script(tmp_path / "models", [{"text": "override"}], name="other")
    fixture = write_fixture(tmp_path, *HANDSHAKE, prompt_step("x", 2), header={"model": "echo"})
    transcript = run_fixture(
        parse_fixture(fixture), RunOptions(model=f"script:{tmp_path / 'models' / 'other.json'}")
    )
    assert entries(transcript)[0]["start"][-2:] == ["--model", "script:models/other.json"]
    assert [u["content"]["text"] for u in updates(transcript, "agent_message_chunk")] == [
        "override"
    ]
