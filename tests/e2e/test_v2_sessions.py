"""v2 session methods through the real process with raw frames: resume (with and without
replay, and what it refuses), close, config options, list, delete, fork, the per-item cancels;
and that the journal of a v2 run is the journal of the same v1 run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import wait_for_pids
from tests.support.raw_client import RawClient, new_session, new_session_v2, raw_agent, text
from tests.support.scripted_model import script
from tests.support.tool_client import DONE, SANDBOXED, call
from tests.support.wire_v2 import validate_agent_frame_v2

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

SLOW = [{"text": "tick ", "repeat": 400, "delay_ms": 20}]


def v2_agent(*args: str, env: dict[str, str] | None = None) -> Any:
    return raw_agent(*args, env=env, validate=validate_agent_frame_v2)


def tags(client: RawClient, session_id: str) -> list[str]:
    return [u["sessionUpdate"] for u in client.updates(session_id)]


async def started_turn(client: RawClient, session_id: str) -> int:
    """A prompt whose turn is streaming: its request id."""
    request_id = await client.start(
        "session/prompt", {"sessionId": session_id, "prompt": text("count")}
    )
    await client.wait_for(
        lambda f: (
            (f.get("params") or {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
        )
    )
    return request_id


async def test_resume_without_replay_sends_the_state_then_answers(tmp_path: Path, ws: Path) -> None:
    data = str(tmp_path / "data")
    async with v2_agent("--model", "echo", "--data-dir", data) as client:
        sid = await new_session_v2(client, str(ws))
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("hello there")})
    async with v2_agent("--model", "echo", "--data-dir", data) as client:
        await client.call(
            "initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}
        )
        request_id = await client.start("session/resume", {"sessionId": sid, "cwd": str(ws)})
        answer = await client.response(request_id)
        before = client.received[: client.received.index(answer)]
        shown = [f["params"]["update"] for f in before if f.get("method") == "session/update"]
        assert shown == [{"sessionUpdate": "state_update", "state": "idle"}]
        assert [o["configId"] for o in answer["result"]["configOptions"]] == ["mode", "model"]


async def test_resume_refuses_an_unknown_cursor_another_cwd_and_replay_while_running(
    tmp_path: Path, ws: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with v2_agent("--model", script(tmp_path, SLOW)) as client:
        sid = await new_session_v2(client, str(ws))
        base = {"sessionId": sid, "cwd": str(ws)}
        cursor = await client.request(
            "session/resume", {**base, "replayFrom": {"type": "messageId", "messageId": "m"}}
        )
        assert cursor["error"]["code"] == -32602 and "messageId" in cursor["error"]["data"]
        moved = await client.request("session/resume", {**base, "cwd": str(elsewhere)})
        assert moved["error"]["code"] == -32602 and str(ws) in moved["error"]["data"]
        await started_turn(client, sid)
        running = await client.request("session/resume", {**base, "replayFrom": {"type": "start"}})
        assert running["error"]["code"] == -32600
        # Without replay it answers, with the current state: running.
        await client.call("session/resume", base)
        states = [u for u in client.updates(sid) if u["sessionUpdate"] == "state_update"]
        assert states[-1] == {"sessionUpdate": "state_update", "state": "running"}
        await client.notify("session/cancel", {"sessionId": sid})


async def test_close_idles_the_running_turn_before_its_answer_and_then_sends_nothing(
    tmp_path: Path, ws: Path
) -> None:
    async with v2_agent("--model", script(tmp_path, SLOW)) as client:
        sid = await new_session_v2(client, str(ws))
        await started_turn(client, sid)
        held = await client.start("session/prompt", {"sessionId": sid, "prompt": text("later")})
        closed = await client.start("session/close", {"sessionId": sid})
        answer = await client.response(closed)
        assert answer["result"] == {}
        assert (await client.response(held))["error"]["code"] == -32800
        at = client.received.index(answer)
        idle = [
            i
            for i, f in enumerate(client.received)
            if f.get("method") == "session/update" and f["params"]["update"].get("state") == "idle"
        ]
        assert idle and idle[-1] < at
        assert client.updates(sid)[-1]["stopReason"] == "cancelled"
        await client.call("session/list", {})  # a round trip: anything pending has arrived
        after = [f for f in client.received[at:] if f.get("method") == "session/update"]
        assert after == []
        # Closing a session that is not active succeeds, as the spec asks.
        assert await client.call("session/close", {"sessionId": "sess_nope"}) == {}


async def test_the_mode_is_a_config_option_set_by_id(ws: Path) -> None:
    async with v2_agent("--model", "echo") as client:
        sid = await new_session_v2(client, str(ws))
        change = {"sessionId": sid, "configId": "mode", "type": "id", "value": "read_only"}
        answer = await client.call("session/set_config_option", change)
        [mode] = [o for o in answer["configOptions"] if o["configId"] == "mode"]
        assert mode["currentValue"] == "read_only"
        assert "config_option_update" in tags(client, sid)
        assert "current_mode_update" not in tags(client, sid)
        boolean = await client.request(
            "session/set_config_option", {**change, "type": "boolean", "value": True}
        )
        assert boolean["error"]["code"] == -32602
        unknown = await client.request("session/set_config_option", {**change, "configId": "x"})
        assert unknown["error"]["code"] == -32602
        # The /mode command announces the change the same way.
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("/mode default")})
        assert tags(client, sid).count("config_option_update") == 2


async def test_list_fork_delete_and_the_item_cancels_answer_in_v2_shapes(ws: Path) -> None:
    async with v2_agent("--model", "echo") as client:
        sid = await new_session_v2(client, str(ws))
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("hi")})
        listed = await client.call("session/list", {})
        assert sid in [s["sessionId"] for s in listed["sessions"]]
        fork = await client.call("session/fork", {"sessionId": sid, "cwd": str(ws)})
        assert fork["sessionId"] != sid and "modes" not in fork
        assert fork["configOptions"][0]["configId"] == "mode"
        for method, key in (("tool_call/cancel", "toolCallId"), ("terminal/cancel", "terminalId")):
            refused = await client.request(method, {"sessionId": sid, key: "call_x"})
            assert refused["error"]["code"] == -32602
            assert refused["error"]["data"] == {key: "call_x"}
        assert await client.call("session/delete", {"sessionId": fork["sessionId"]}) == {}
        listed = await client.call("session/list", {})
        assert fork["sessionId"] not in [s["sessionId"] for s in listed["sessions"]]


async def test_the_journal_of_a_v2_run_is_the_journal_of_the_same_v1_run(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, [{"thought": "hm"}, {"text": "hello"}])
    journals = []
    for version in (1, 2):
        data = tmp_path / f"data{version}"
        check = validate_agent_frame_v2 if version == 2 else None
        agent = raw_agent(
            "--model",
            spec,
            "--data-dir",
            str(data),
            "--deterministic",
            **({"validate": check} if check else {}),
        )
        async with agent as client:
            start = new_session_v2 if version == 2 else new_session
            sid = await start(client, str(ws))
            await client.call("session/prompt", {"sessionId": sid, "prompt": text("hi")})
            await client.wait_for(
                lambda f: (
                    (f.get("params") or {}).get("update", {}).get("state") == "idle"
                    or ("result" in f and "stopReason" in f["result"])
                )
            )
        [journal] = (data / "sessions").rglob("*.jsonl")
        journals.append(journal.read_bytes())
    assert journals[0] == journals[1]


def tool_calls_shown(client: RawClient, session_id: str) -> dict[str, dict[str, Any]]:
    """Each tool call as the client holds it once every update was applied (v1's `tool_call`
    and both wires' `tool_call_update`: a member replaces the one before). Display terminals
    are left out: live-only on v2 (not journaled, not replayed)."""
    calls: dict[str, dict[str, Any]] = {}
    for update in client.updates(session_id):
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            shown = calls.setdefault(update["toolCallId"], {})
            shown.update({k: v for k, v in update.items() if k != "sessionUpdate"})
            if "content" in update:
                shown["content"] = [c for c in update["content"] if c["type"] != "terminal"]
    return calls


@pytest.mark.parametrize("version", [1, 2])
async def test_a_call_the_cancel_stopped_replays_as_it_was_shown_live(
    tmp_path: Path, ws: Path, version: int
) -> None:
    """v2 shows a command the cancel stopped `cancelled`, live and in a resume's replay; v1 has
    no such status and shows it `failed`, live and in a load's replay. Same text either way."""
    data = str(tmp_path / "data")
    pidfile = tmp_path / "pids"
    spec = script(tmp_path, call("bash", command=f"echo $$ > {pidfile}; sleep 300"), DONE)
    argv = ("--model", spec, "--mode", "bypass", "--data-dir", data)
    agent = v2_agent(*argv, env=SANDBOXED) if version == 2 else raw_agent(*argv, env=SANDBOXED)
    async with agent as client:
        sid = await (new_session_v2 if version == 2 else new_session)(client, str(ws))
        running = await client.start("session/prompt", {"sessionId": sid, "prompt": text("go")})
        await wait_for_pids(pidfile)  # the command runs: the call has started
        await client.notify("session/cancel", {"sessionId": sid})
        if version == 2:
            await client.wait_for(
                lambda f: (f.get("params") or {}).get("update", {}).get("state") == "idle"
            )
        else:
            assert (await client.response(running))["result"]["stopReason"] == "cancelled"
        [live] = tool_calls_shown(client, sid).values()
    assert live["status"] == ("cancelled" if version == 2 else "failed")
    assert live["content"] == [
        {"type": "content", "content": {"type": "text", "text": "cancelled: the turn was aborted"}}
    ]
    agent = v2_agent(*argv, env=SANDBOXED) if version == 2 else raw_agent(*argv, env=SANDBOXED)
    async with agent as client:
        if version == 2:
            await client.call(
                "initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}
            )
            reopen = {"sessionId": sid, "cwd": str(ws), "replayFrom": {"type": "start"}}
            await client.call("session/resume", reopen)
        else:
            await client.call("initialize", {"protocolVersion": 1})
            await client.call("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        [replayed] = tool_calls_shown(client, sid).values()
    assert replayed == live
