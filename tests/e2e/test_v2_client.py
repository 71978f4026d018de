"""ACP v2 through the real process with the official TypeScript SDK's v2 client
(tests/support/v2_driver.py): a turn, a cancel mid-stream, a resume with replay in a new
process, a close. Every frame the agent writes is valid v2 (the schema and the allow-lists of
tests/support/wire_v2.py); the SDK drops no frame; nothing of a turn follows its idle."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.scripted_model import script
from tests.support.tool_client import DONE, call
from tests.support.v2_driver import Run, drive
from tests.support.wire_v2 import after_idle

pytestmark = pytest.mark.anyio

TOOL_TURN = [{"thought": "I will look."}, {"text": "Listing. "}, *call("bash", command="echo hi")]


def states(run: Run, session_id: str) -> list[str]:
    return [
        u["state"] + (f":{u['stopReason']}" if u.get("stopReason") else "")
        for u in run.updates(session_id)
        if u["sessionUpdate"] == "state_update"
    ]


def session_of(run: Run) -> str:
    [created] = run.steps("session/new")
    session_id: str = created["value"]["sessionId"]
    return session_id


async def test_a_turn_through_the_sdk_client(tmp_path: Path, ws: Path) -> None:
    spec = script(tmp_path, TOOL_TURN, DONE)
    run = await drive(ws, ["new", "prompt list the files", "close"], "--model", spec)
    run.check()
    sid = session_of(run)
    [answer] = run.steps("session/prompt")
    updates = run.updates(sid)
    [echo] = [u for u in updates if u["sessionUpdate"] == "user_message"]
    assert answer["value"] == {"messageId": echo["messageId"]}  # the inserted prompt
    assert echo["content"] == [{"type": "text", "text": "list the files"}]
    # The permission wait is bracketed by requires_action, and the turn ends idle.
    assert states(run, sid) == ["running", "requires_action", "running", "idle:end_turn"]
    [asked] = [f for f in run.frames() if f.get("method") == "session/request_permission"]
    assert asked["params"]["subject"] == {
        "type": "command",
        "command": "echo hi",
        "cwd": str(ws),
        "toolCallId": asked["params"]["subject"]["toolCallId"],
    }
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    call_id = calls[0]["toolCallId"]
    assert calls[0]["title"] == "Run `echo hi`" and calls[0]["kind"] == "execute"
    assert calls[-1]["status"] == "completed"
    assert {"type": "terminal", "terminalId": call_id} in calls[-1]["content"]
    terminal = [u for u in updates if u["sessionUpdate"] == "terminal_update"]
    assert terminal[0]["command"] == "echo hi" and terminal[0]["cwd"] == str(ws)
    assert terminal[-1]["exitStatus"] == {"exitCode": 0}
    chunks = [u for u in updates if u["sessionUpdate"].endswith("_chunk")]
    assert chunks and all(u["messageId"] for u in chunks)
    assert after_idle(run.frames(), sid) == []
    # The client's own view: what the SDK handed the app, the idle as a stop.
    assert "user_message" in run.delivered() and run.delivered()[-1] == "stop"
    assert [r["value"] for r in run.steps("idle")] == [{"stopReason": "end_turn"}]


async def test_a_cancel_mid_stream_ends_the_turn_idle_cancelled(tmp_path: Path, ws: Path) -> None:
    slow = [{"text": "tick ", "repeat": 500, "delay_ms": 20}]
    spec = script(tmp_path, slow)
    run = await drive(ws, ["new", "cancel count forever", "close"], "--model", spec)
    run.check()
    sid = session_of(run)
    assert [r["value"] for r in run.steps("idle")] == [
        {"stopReason": "cancelled", "cancelSent": True}
    ]
    assert states(run, sid) == ["running", "idle:cancelled"]
    chunks = [u for u in run.updates(sid) if u["sessionUpdate"] == "agent_message_chunk"]
    assert 0 < len(chunks) < 500  # stopped mid-stream
    assert after_idle(run.frames(), sid) == []
    # The cancel came after the prompt's answer: the prompt was inserted, not dropped.
    [answer] = run.steps("session/prompt")
    assert answer["ok"] and answer["value"]["messageId"]


async def test_a_resume_with_replay_in_a_new_process_shows_the_ids_seen_live(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, TOOL_TURN, DONE)
    data = tmp_path / "data"
    args = ("--model", spec, "--data-dir", str(data))
    live = await drive(ws, ["new", "prompt list the files", "close"], *args)
    live.check()
    sid = session_of(live)
    again = await drive(ws, [f"resume {sid}", "close"], *args)
    again.check()
    shown = {"user_message", "agent_message_chunk", "agent_thought_chunk", "tool_call_update"}

    def ids(updates: list[dict[str, object]]) -> list[tuple[object, object]]:
        return [
            (u["sessionUpdate"], u.get("messageId") or u.get("toolCallId"))
            for u in updates
            if u["sessionUpdate"] in shown
        ]

    replayed = again.updates(sid)
    assert ids(replayed) and set(ids(replayed)) == set(ids(live.updates(sid)))
    tags = [u["sessionUpdate"] for u in replayed]
    assert tags.count("replay_complete") == 1
    done_at = tags.index("replay_complete")
    assert set(tags[:done_at]) <= shown  # history only: no terminals, no state
    # Then the current state, then the answer (the state is the SDK's `stop`).
    assert replayed[done_at + 1] == {"sessionUpdate": "state_update", "state": "idle"}
    frames = again.frames()
    snapshot_at = next(
        i
        for i, f in enumerate(frames)
        if f.get("method") == "session/update"
        and f["params"]["update"] == {"sessionUpdate": "state_update", "state": "idle"}
    )
    [resume_id] = [f["id"] for f in again.frames("c2a") if f.get("method") == "session/resume"]
    answered_at = next(i for i, f in enumerate(frames) if f.get("id") == resume_id)
    assert snapshot_at < answered_at
    assert [r["value"] for r in again.steps("snapshot")] == [{"stopReason": None}]
