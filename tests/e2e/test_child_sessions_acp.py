"""`task` children as child sessions (ACP subagent sessions), through the real process with
raw frames: announced with `subagent_update` before any of their traffic, linked from the
parent's `task` call with `session` content, their updates under their own id; `session/cancel`
on a child stops only the child; the parent's cancel still stops it (and reaps its processes);
a client that did not opt in sees none of it; a journal written before the agent made its own
call ids replays each child after its own `task` call."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_server.session import records as rec
from acp_server.session.journal import JournalHeader, JournalStore
from tests.support.legacy_calls import AT, asked, call, result, turn
from tests.support.processes import alive, wait_for_pids
from tests.support.raw_client import RawClient, raw_agent, text

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

SANDBOXED = {"ACP_SERVER_SANDBOXED": "1"}
TASK = {
    "tool_call": {"name": "task", "arguments": {"prompt": "Look around.", "description": "Survey"}}
}
OPTED_IN = {"subagents": {}}


def write_script(tmp_path: Path, parent: list[Any], child: list[Any]) -> str:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"responses": parent, "subagent": {"responses": child}}))
    return f"script:{path}"


def workspace(tmp_path: Path) -> str:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return os.path.realpath(ws)


async def start(tmp_path: Path, client: RawClient, capabilities: dict[str, Any]) -> str:
    cwd = workspace(tmp_path)
    await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
    new = await client.call("session/new", {"cwd": cwd, "mcpServers": []})
    return str(new["sessionId"])


def args(spec: str, tmp_path: Path) -> list[str]:
    return ["--model", spec, "--mode", "bypass", "--data-dir", str(tmp_path / "data")]


def updates(client: RawClient) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f["params"]["sessionId"], f["params"]["update"])
        for f in client.received
        if f.get("method") == "session/update"
    ]


def child_frames(client: RawClient, child: str) -> list[int]:
    """Indexes of every received frame naming the child's session id."""
    return [i for i, f in enumerate(client.received) if child in json.dumps(f)]


async def test_a_child_is_announced_linked_and_shown_under_its_own_id(tmp_path: Path) -> None:
    spec = write_script(
        tmp_path, [[TASK], [{"text": "parent done"}]], [[{"text": "child says hi"}]]
    )
    async with raw_agent(*args(spec, tmp_path), env=SANDBOXED) as client:
        sid = await start(tmp_path, client, OPTED_IN)
        result = await client.call("session/prompt", {"sessionId": sid, "prompt": text("go")})
    child = f"{sid}.task1"
    assert result["stopReason"] == "end_turn"
    seen = updates(client)
    announce = next(i for i, (s, u) in enumerate(seen) if u["sessionUpdate"] == "subagent_update")
    first_with_child = child_frames(client, child)[0]
    assert client.received[first_with_child]["params"]["update"] == seen[announce][1]
    assert seen[announce] == (
        sid,
        {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "title": "Survey",
            "description": "Survey",
            "capabilities": {"cancel": {}},
            "state": {"state": "running"},
        },
    )
    child_updates = [u for s, u in seen if s == child]
    assert {"sessionUpdate": "agent_message_chunk", "text": "child says hi"} in [
        {"sessionUpdate": u["sessionUpdate"], "text": u.get("content", {}).get("text")}
        for u in child_updates
    ]
    task_updates = [u for s, u in seen if s == sid and u["sessionUpdate"] == "tool_call_update"]
    final = [u for u in task_updates if u.get("status") == "completed"][-1]
    assert final["content"][0] == {"type": "session", "sessionId": child}
    assert final["content"][-1]["content"]["text"] == "child says hi"
    idle = [u for s, u in seen if u["sessionUpdate"] == "subagent_update"][-1]
    assert idle == {
        "sessionUpdate": "subagent_update",
        "sessionId": child,
        "state": {"state": "idle", "stopReason": "end_turn"},
    }


async def test_a_client_that_did_not_opt_in_sees_no_child(tmp_path: Path) -> None:
    spec = write_script(
        tmp_path, [[TASK], [{"text": "parent done"}]], [[{"text": "child says hi"}]]
    )
    async with raw_agent(*args(spec, tmp_path), env=SANDBOXED) as client:
        sid = await start(tmp_path, client, {"plan": {}})
        result = await client.call("session/prompt", {"sessionId": sid, "prompt": text("go")})
    assert result["stopReason"] == "end_turn"
    assert child_frames(client, f"{sid}.task1") == []
    assert all(s == sid for s, _ in updates(client))
    assert not [u for _, u in updates(client) if u["sessionUpdate"] == "subagent_update"]


async def test_cancelling_a_child_stops_only_the_child(tmp_path: Path) -> None:
    spec = write_script(
        tmp_path,
        [[TASK], [{"text": "parent goes on"}]],
        [[{"text": "working"}, {"delay_ms": 60_000}, {"text": "never"}]],
    )
    async with raw_agent(*args(spec, tmp_path), env=SANDBOXED) as client:
        sid = await start(tmp_path, client, OPTED_IN)
        child = f"{sid}.task1"
        prompt = await client.start("session/prompt", {"sessionId": sid, "prompt": text("go")})
        await client.wait_for(
            lambda f: (
                f.get("method") == "session/update"
                and f["params"]["sessionId"] == child
                and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            )
        )
        await client.notify("session/cancel", {"sessionId": child})
        response = await client.response(prompt)
    assert response["result"]["stopReason"] == "end_turn"  # the parent's turn went on
    seen = updates(client)
    final = [
        u
        for s, u in seen
        if s == sid and u["sessionUpdate"] == "tool_call_update" and u.get("status") == "failed"
    ][-1]
    assert final["content"][0] == {"type": "session", "sessionId": child}
    assert "the subagent did not finish: it was aborted" in final["content"][-1]["content"]["text"]
    parent_text = [
        u["content"]["text"]
        for s, u in seen
        if s == sid and u["sessionUpdate"] == "agent_message_chunk"
    ]
    assert parent_text == ["parent goes on"]
    idle = [u for _, u in seen if u["sessionUpdate"] == "subagent_update"][-1]
    assert idle["state"] == {"state": "idle", "stopReason": "cancelled"}


async def test_cancelling_the_parent_stops_the_child_and_reaps_its_processes(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pids"
    sleeper = {"command": f"sleep 300 & echo $! >> {pidfile}; wait"}
    spec = write_script(
        tmp_path,
        [[TASK], [{"text": "parent done"}]],
        [[{"tool_call": {"name": "bash", "arguments": sleeper}}], [{"text": "child done"}]],
    )
    async with raw_agent(*args(spec, tmp_path), env=SANDBOXED) as client:
        sid = await start(tmp_path, client, OPTED_IN)
        prompt = await client.start("session/prompt", {"sessionId": sid, "prompt": text("go")})
        [pid] = await wait_for_pids(pidfile)
        assert alive(pid)
        await client.notify("session/cancel", {"sessionId": sid})
        response = await client.response(prompt)
        survived = alive(pid)
    assert response["result"]["stopReason"] == "cancelled"
    assert not survived  # reaped before the answer
    idle = [u for _, u in updates(client) if u["sessionUpdate"] == "subagent_update"][-1]
    assert idle["state"] == {"state": "idle", "stopReason": "cancelled"}
    # The child's own tool call was shown under its id, not the parent's.
    child_calls = [
        u for s, u in updates(client) if s == f"{sid}.task1" and u["sessionUpdate"] == "tool_call"
    ]
    assert [c["title"] for c in child_calls] and all(
        s == sid
        for s, u in updates(client)
        if u["sessionUpdate"] == "tool_call" and u not in child_calls
    )


@pytest.mark.parametrize("opted_in", [True, False])
async def test_loading_the_parent_replays_each_child_after_its_task_call(
    tmp_path: Path, opted_in: bool
) -> None:
    spec = write_script(
        tmp_path, [[TASK], [{"text": "parent done"}]], [[{"text": "child says hi"}]]
    )
    capabilities = OPTED_IN if opted_in else {}
    async with raw_agent(*args(spec, tmp_path), env=SANDBOXED) as client:
        sid = await start(tmp_path, client, capabilities)
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("go")})
    child = f"{sid}.task1"
    async with raw_agent(*args(spec, tmp_path), env=SANDBOXED) as client:
        await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
        await client.call(
            "session/load", {"sessionId": sid, "cwd": workspace(tmp_path), "mcpServers": []}
        )
        replay = updates(client)
    kinds = [(s, u["sessionUpdate"]) for s, u in replay]
    if not opted_in:
        assert all(s == sid for s, _ in kinds)
        assert child_frames(client, child) == []
        return
    call = kinds.index((sid, "tool_call"))
    assert kinds[call + 1] == (sid, "subagent_update")
    assert replay[call + 1][1] == {
        "sessionUpdate": "subagent_update",
        "sessionId": child,
        "title": "Survey",
        "description": "Survey",
        "state": {"state": "idle", "stopReason": "end_turn"},
    }
    child_part = [u for s, u in replay if s == child]
    assert [u["sessionUpdate"] for u in child_part] == ["user_message_chunk", "agent_message_chunk"]
    assert child_part[0]["content"]["text"] == "Look around."
    assert child_part[1]["content"]["text"] == "child says hi"
    # The child's frames come right after its announcement, before the call's result.
    first_child = next(i for i, (s, _) in enumerate(kinds) if s == child)
    assert first_child == call + 2
    result = next(
        u for s, u in replay[call:] if s == sid and u["sessionUpdate"] == "tool_call_update"
    )
    assert result["content"][0] == {"type": "session", "sessionId": child}


def legacy_parent_and_children(data: Path, cwd: str) -> None:
    """A parent journal written before the agent made its own ids: a `task` call in each of two
    turns, both `call_1`, and a child journal for each whose header names `call_1` too."""
    store = JournalStore(data)
    parent = store.create(JournalHeader(session_id="old", cwd=cwd, created_at=AT))
    for number, what in ((1, "first"), (2, "second")):
        turn_id = f"t{number}"
        task = call("call_1", "task", prompt=f"Do the {what} part.", description=f"The {what}")
        records = turn(
            turn_id,
            asked(turn_id, task),
            result(turn_id, "call_1", f"The {what}", "think", f"{what} done"),
        )
        for record in records:
            parent.append(record)
        header = JournalHeader(
            session_id=f"old.task{number}",
            cwd=cwd,
            created_at=AT,
            parent_session_id="old",
            parent_tool_call_id="call_1",
        )
        child = store.create(header)
        for record in turn(
            "c1",
            rec.AssistantMessage(
                turn_id="c1", message_id="c", parts=[rec.TextPart(text=f"{what} child")], at=AT
            ),
        ):
            child.append(record)
        child.close()
    parent.close()


async def test_a_journal_written_before_replays_each_child_after_its_own_task_call(
    tmp_path: Path,
) -> None:
    """Both `task` calls were `call_1`: loading names them `call_1` and `call_1~2`, and each
    child still follows its own call, linked from it (the second child replaced the first,
    shown after the first call, and the second call had none)."""
    cwd = workspace(tmp_path)
    legacy_parent_and_children(tmp_path / "data", cwd)
    spec = write_script(tmp_path, [[{"text": "unused"}]], [[{"text": "unused"}]])
    async with raw_agent(*args(spec, tmp_path), env=SANDBOXED) as client:
        await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": OPTED_IN})
        await client.call("session/load", {"sessionId": "old", "cwd": cwd, "mcpServers": []})
        replay = updates(client)
    shown = []
    for session, update in replay:
        kind = update["sessionUpdate"]
        if kind == "tool_call":
            shown.append(("call", update["toolCallId"], update["title"]))
        elif kind == "subagent_update":
            shown.append(("child", update["sessionId"], update["title"]))
        elif session != "old" and kind == "agent_message_chunk":
            shown.append(("says", session, update["content"]["text"]))
        elif kind == "tool_call_update" and update.get("content"):
            shown.append(("link", update["toolCallId"], update["content"][0].get("sessionId")))
    assert shown == [
        ("call", "call_1", "The first"),
        ("child", "old.task1", "The first"),
        ("says", "old.task1", "first child"),
        ("link", "call_1", "old.task1"),
        ("call", "call_1~2", "The second"),
        ("child", "old.task2", "The second"),
        ("says", "old.task2", "second child"),
        ("link", "call_1~2", "old.task2"),
    ]
