"""The fixture runner (acp_fixture/) as its users run it, the `acp-fixture` console script:
golden files, substitutions, permission policies, cancels, restarts, client requests, timeouts
and invalid fixtures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_fixture import FixtureError, RunOptions, parse_fixture, run_fixture
from tests.support.scripted_model import script

REPO = Path(__file__).resolve().parents[2]
FIXTURE_COMMAND = [str(Path(sys.executable).parent / "acp-fixture")]  # the console script
EXAMPLES = sorted(
    path for path in REPO.glob("examples/*/*.jsonl") if not path.name.endswith(".golden.jsonl")
)

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


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
    model = script(tmp_path, *WRITE_TWICE)
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
    model = script(
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
    model = script(
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
    model = script(tmp_path, [{"delay_ms": 60_000}])
    fixture = write_fixture(
        tmp_path, *HANDSHAKE, prompt_step("wait", 2), {"wait": "response"}, header={"model": model}
    )
    # The timeout covers every wait, the handshake's too: 5 s leaves a loaded machine room to
    # start the server, and the model's 60 s pause still outlasts it.
    result = run_cli("run", fixture, "--output", "-", "--timeout", "5", "--", "--log-level", "info")
    assert result.returncode == 2
    assert "case.jsonl:7: timed out after 5 s waiting for the response to session/prompt" in (
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
    script(tmp_path / "models", [{"text": "override"}], name="other")
    fixture = write_fixture(tmp_path, *HANDSHAKE, prompt_step("x", 2), header={"model": "echo"})
    transcript = run_fixture(
        parse_fixture(fixture), RunOptions(model=f"script:{tmp_path / 'models' / 'other.json'}")
    )
    assert entries(transcript)[0]["start"][-2:] == ["--model", "script:models/other.json"]
    assert [u["content"]["text"] for u in updates(transcript, "agent_message_chunk")] == [
        "override"
    ]
