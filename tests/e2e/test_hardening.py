"""Holes an adversarial review found in the ACP surface, each pinned through the real process
and the official SDK client (issue 14):

- a mode restored from a journal passes the same check as `session/set_mode`;
- `session/new` with a NUL byte in a path answers -32602 and creates nothing;
- a permission answer with a malformed outcome counts as a rejection and the turn goes on;
- two `--deterministic` processes on one data directory never collide on session ids;
- a full data directory makes the prompt answer an error naming it, never a silent loss.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from acp import RequestError, text_block

from tests.support.agent_process import RecordingClient, running_agent

pytestmark = pytest.mark.anyio

SANDBOXED = {"ACP_SERVER_SANDBOXED": "1"}


def script(tmp_path: Path, *responses: list[dict[str, Any]]) -> str:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"responses": list(responses)}))
    return f"script:{path}"


def bash(command: str) -> list[dict[str, Any]]:
    return [{"tool_call": {"name": "bash", "arguments": {"command": command}}}]


class AnsweringClient(RecordingClient):
    """Answers every permission request with `answer` (a raw result object, so a malformed
    one can be sent) and records the requests."""

    def __init__(self, answer: Any = None) -> None:
        super().__init__()
        self.answer = answer
        self.asked: list[Any] = []

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        self.asked.append(tool_call)
        if self.answer is not None:
            return self.answer
        reject = next(o for o in options if o.kind == "reject_once")
        return {"outcome": {"outcome": "selected", "optionId": reject.option_id}}

    def kinds(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))


# --------------------------------------------------------------------------- restored modes


@pytest.mark.skipif(os.geteuid() != 0, reason="bypass is refused only to root")
@pytest.mark.parametrize("reopen", ["load", "resume"])
async def test_a_restored_bypass_mode_passes_the_root_check_and_falls_back_to_default(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch, reopen: str
) -> None:
    data = tmp_path / "data"
    spec = script(tmp_path, bash(f"touch {ws}/ran"), [{"text": "done"}])
    async with running_agent("--model", spec, "--data-dir", str(data), env=SANDBOXED) as (
        conn,
        _,
        _,
        _,
    ):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="bypass")

    monkeypatch.delenv("ACP_SERVER_SANDBOXED", raising=False)
    client = AnsweringClient()
    async with running_agent("--model", spec, "--data-dir", str(data), client=client) as (
        conn,
        _,
        frames,
        _,
    ):
        await conn.initialize(protocol_version=1)
        if reopen == "load":
            answer = await conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[])
        else:
            answer = await conn.resume_session(session_id=sid, cwd=str(ws), mcp_servers=[])
        assert answer.modes is not None and answer.modes.current_mode_id == "default"
        [mode_option] = [o for o in answer.config_options or [] if o.id == "mode"]
        assert mode_option.current_value == "default"
        stop = await conn.prompt(session_id=sid, prompt=[text_block("run it")])

    # The client is told that the mode it left the session in was not restored: a load before
    # its answer (the session exists on the client from the load request on, and nothing of the
    # session follows the answer: docs/rfc/implemented/architecture/2026-11-30-session-journal.md),
    # a resume after its answer (where the client knows the session).
    method = f"session/{reopen}"
    request_id = next(f["id"] for f in frames.sent if f.get("method") == method)
    answered_at = next(
        i for i, f in enumerate(frames.received) if f.get("id") == request_id and "result" in f
    )
    told = [
        (i, f["params"]["update"])
        for i, f in enumerate(frames.received)
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "current_mode_update"
    ]
    if reopen == "load":
        assert [u["currentModeId"] for i, u in told if i < answered_at][-1:] == ["default"]
        assert not [u for i, u in told if i > answered_at]
    else:
        assert [u["currentModeId"] for i, u in told if i > answered_at][:1] == ["default"]
    # bash was asked about, not run unasked: rejected, so nothing ran, and the turn went on.
    assert [c.title for c in client.asked] and not (ws / "ran").exists()
    assert stop.stop_reason == "end_turn"


async def test_a_restored_mode_this_process_allows_is_kept(tmp_path: Path, ws: Path) -> None:
    data = tmp_path / "data"
    spec = script(tmp_path, [{"text": "done"}])
    async with running_agent("--model", spec, "--data-dir", str(data)) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="read_only")
    async with running_agent("--model", spec, "--data-dir", str(data)) as (conn, _, _, client):
        await conn.initialize(protocol_version=1)
        answer = await conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[])
    assert answer.modes is not None and answer.modes.current_mode_id == "read_only"
    modes = [
        u.current_mode_id for _, u in client.updates if u.session_update == "current_mode_update"
    ]
    assert modes == ["read_only"]  # the replayed switch only: no fallback announced


# --------------------------------------------------------------------------- NUL in paths


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.parametrize("where", ["cwd", "additionalDirectories"])
async def test_a_nul_byte_in_a_session_path_is_invalid_params_and_creates_nothing(
    tmp_path: Path, ws: Path, where: str
) -> None:
    data = tmp_path / "data"
    async with running_agent("--model", "echo", "--data-dir", str(data)) as (
        conn,
        process,
        _,
        _,
    ):
        await conn.initialize(protocol_version=1)
        first = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        # The runtime loads and wires the session after the first answer (the warm-up); a
        # call that needs the runtime waits for it, so the descriptors counted are settled.
        await conn.list_sessions()
        before = sorted(os.listdir(data / "sessions"))
        fds = open_fds(process.pid)
        params: dict[str, Any] = {"cwd": str(ws), "mcpServers": []}
        if where == "cwd":
            params["cwd"] = f"{ws}/a\x00b"
        else:
            params["additionalDirectories"] = [f"{ws}/x\x00y"]
        for _ in range(3):  # each attempt would leak a descriptor and leave a session
            with pytest.raises(RequestError) as refused:
                await conn._conn.send_request("session/new", params)
            assert refused.value.code == -32602
            assert "NUL" in str(refused.value.data) and where in str(refused.value.data)
        assert sorted(os.listdir(data / "sessions")) == before
        assert open_fds(process.pid) == fds
        listed = await conn.list_sessions()
        assert [s.session_id for s in listed.sessions] == [first]
        # The connection goes on: a good session/new works.
        again = await conn.new_session(cwd=str(ws), mcp_servers=[])
        assert again.session_id != first


async def test_a_nul_byte_in_a_load_path_is_invalid_params(tmp_path: Path, ws: Path) -> None:
    async with running_agent("--model", "echo", "--data-dir", str(tmp_path / "data")) as (
        conn,
        _,
        _,
        _,
    ):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.close_session(session_id=sid)
        with pytest.raises(RequestError) as refused:
            await conn.load_session(session_id=sid, cwd=f"{ws}\x00", mcp_servers=[])
        assert refused.value.code == -32602
        answer = await conn.load_session(session_id=sid, cwd=str(ws), mcp_servers=[])
        assert answer is not None


# --------------------------------------------------------------------------- permission answers


@pytest.mark.parametrize(
    "malformed",
    [
        {"outcome": {"outcome": "selected"}},  # no optionId
        {"outcome": "allow"},
        {"outcome": {"outcome": "granted", "optionId": "allow_once"}},
        {},
        [],
    ],
)
async def test_a_malformed_permission_answer_is_a_rejection_and_the_turn_goes_on(
    tmp_path: Path, ws: Path, malformed: Any
) -> None:
    spec = script(tmp_path, bash(f"touch {ws}/ran"), [{"text": "carried on"}])
    client = AnsweringClient(answer=malformed)
    async with running_agent("--model", spec, client=client) as (conn, _, _, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        stop = await conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert stop.stop_reason == "end_turn"
    assert len(client.asked) == 1 and not (ws / "ran").exists()
    [failed] = [u for u in client.kinds("tool_call_update") if u.status == "failed"]
    assert "rejected" in json.dumps(failed.model_dump(mode="json"))
    texts = [u.content.text for u in client.kinds("agent_message_chunk")]
    assert "carried on" in texts


# --------------------------------------------------------------------------- deterministic ids

PER_PROCESS = 30


async def test_two_deterministic_processes_on_one_data_dir_never_collide(
    tmp_path: Path, ws: Path
) -> None:
    data = tmp_path / "data"
    made: dict[str, list[str]] = {"a": [], "b": []}

    async def create_many(name: str) -> None:
        async with running_agent("--deterministic", "--model", "echo", "--data-dir", str(data)) as (
            conn,
            _,
            _,
            _,
        ):
            await conn.initialize(protocol_version=1)
            for _ in range(PER_PROCESS):
                session = await conn.new_session(cwd=str(ws), mcp_servers=[])
                made[name].append(session.session_id)
                await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(create_many, "a")
        tg.start_soon(create_many, "b")
    every = made["a"] + made["b"]
    assert len(every) == 2 * PER_PROCESS and len(set(every)) == len(every)
    assert sorted(every) == [f"sess_{n:04d}" for n in range(1, 2 * PER_PROCESS + 1)]
    # Each process's own ids rise: the order is reproducible within a process.
    assert made["a"] == sorted(made["a"]) and made["b"] == sorted(made["b"])
    journals = sorted(p.stem for p in (data / "sessions").glob("*.jsonl"))
    assert journals == sorted(every)


# --------------------------------------------------------------------------- titles


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("", None),
        ("  \n\n  hello   world \n next", "hello world"),
        ("\n" * 5 + "x", "x"),
        (" " * 1000 + "word " * 30, ("word " * 12).strip() + "\u2026"),
        ("a" * 100, "a" * 59 + "\u2026"),
        ("w " * 30, ("w " * 30).strip()),
        ("word " * 10_000_000, ("word " * 12).strip() + "\u2026"),  # a 50 MB prompt
    ],
)
def test_a_title_is_the_first_non_blank_line_shortened(text: str, title: str | None) -> None:
    from acp_server.acp.methods.listing import derive_title

    assert derive_title(text) == title
