"""A v2 session's view, in process: runtime events in, v2 updates out, in order, each valid v2
(the schema and the allow-lists of tests/support/wire_v2.py). The end-to-end tests drive the
same through the real process; these pin each rendering and each state change alone."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from acp_protocol.jsonrpc import JSONRPC_VERSION, OutgoingNotification, OutgoingRequest
from acp_server.acp.context import BridgeContext
from acp_server.acp.options import ServerOptions
from acp_server.acp.v2.presenter import V2Presenter
from acp_server.acp.v2.view import V2SessionView
from acp_server.agent import (
    Blocked,
    MessageChunk,
    PlanUpdated,
    ThoughtChunk,
    ToolCallAnnounced,
    ToolCallProgress,
    TurnSettled,
    TurnStarting,
    UserMessageRecorded,
)
from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.models.base import Usage
from acp_server.process import ProcessRegistry
from acp_server.session import records as rec
from acp_server.tools.base import Diff, PlanItem, ProcessExit
from tests.support.wire_v2 import validate_agent_frame_v2

pytestmark = pytest.mark.anyio

SESSION = "sess_1"
TURN = "turn_1"


class RecordingPeer:
    """The peer's two sends, recorded as the frames they would write; requests are answered
    by `answer` (a function of the params)."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.answer: Callable[[dict[str, Any]], Any] = lambda params: {}
        self.asked = anyio.Event()

    async def notify(self, method: str, params: Any) -> None:
        frame = OutgoingNotification(JSONRPC_VERSION, method, params)
        self.frames.append(json.loads(msgspec.json.encode(frame)))

    async def request(self, method: str, params: Any, result_type: type, **_: Any) -> Any:
        frame = json.loads(msgspec.json.encode(OutgoingRequest(JSONRPC_VERSION, 0, method, params)))
        self.frames.append(frame)
        self.asked.set()
        answer = self.answer(frame["params"])
        if isinstance(answer, anyio.Event):
            await answer.wait()
            answer = {"outcome": {"outcome": "cancelled"}}
        return msgspec.convert(answer, result_type)

    def updates(self) -> list[dict[str, Any]]:
        return [f["params"]["update"] for f in self.frames if f.get("method") == "session/update"]

    def states(self) -> list[str]:
        return [
            u["state"] + (f":{u['stopReason']}" if "stopReason" in u else "")
            for u in self.updates()
            if u["sessionUpdate"] == "state_update"
        ]


@asynccontextmanager
async def view_of(tmp_path: Path) -> AsyncIterator[tuple[V2SessionView, RecordingPeer]]:
    async with presented(tmp_path) as (view, peer, _):
        yield view, peer


@asynccontextmanager
async def presented(
    tmp_path: Path,
) -> AsyncIterator[tuple[V2SessionView, RecordingPeer, V2Presenter]]:
    peer = RecordingPeer()
    async with anyio.create_task_group() as tg:
        context = BridgeContext(
            peer,  # type: ignore[arg-type]
            tg,
            ServerOptions(data_dir=tmp_path),
            ProcessRegistry(),
        )
        presenter = V2Presenter(context)
        context.presenter = presenter
        view = presenter.session_view(SESSION, str(tmp_path), [])
        assert isinstance(view, V2SessionView)
        yield view, peer, presenter
    for frame in peer.frames:
        validate_agent_frame_v2(frame)


def settled(result: Any, **fields: Any) -> TurnSettled:
    values: dict[str, Any] = {
        "error_detail": None,
        "not_saved": None,
        "usage": None,
        "last_usage": None,
        "window": 1000,
    }
    values.update(fields)
    return TurnSettled(TURN, result, **values)


def bash(call_id: str, command: str) -> ToolCallAnnounced:
    return ToolCallAnnounced(TURN, call_id, "bash", command, "execute", {"command": command})


async def test_a_turn_reads_running_then_its_updates_then_idle_with_its_stop_reason(
    tmp_path: Path,
) -> None:
    async with view_of(tmp_path) as (view, peer):
        await view(TurnStarting(TURN))
        await view(UserMessageRecorded(TURN, "msg_1", (rec.TextPart(text="hi"),)))
        await view(ThoughtChunk(TURN, "msg_2", "thinking"))
        await view(MessageChunk(TURN, "msg_2", "hello"))
        await view(MessageChunk(TURN, "msg_3", "the agent's own", from_agent=True))
        usage = Usage(input_tokens=10, output_tokens=5)
        await view(settled(rec.Completed(), usage=usage, last_usage=usage))
    updates = peer.updates()
    assert [u["sessionUpdate"] for u in updates] == [
        "state_update",
        "user_message",
        "agent_thought_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "usage_update",
        "state_update",
    ]
    assert updates[1] == {
        "sessionUpdate": "user_message",
        "messageId": "msg_1",
        "content": [{"type": "text", "text": "hi"}],
    }
    assert updates[3]["messageId"] == "msg_2" and "_meta" not in updates[3]
    assert updates[4]["_meta"] == {"acp-server": {"origin": "agent"}}
    assert updates[5]["used"] == 15 and updates[5]["size"] == 1000
    assert peer.states() == ["running", "idle:end_turn"]


async def test_a_command_is_shown_on_a_display_terminal_escaped_with_its_exit_status(
    tmp_path: Path,
) -> None:
    async with view_of(tmp_path) as (view, peer):
        await view(TurnStarting(TURN))
        await view(bash("call_1", "printf '\\033[2J'; ls"))
        await view(ToolCallProgress(TURN, "call_1", "in_progress"))
        await view(ToolCallProgress(TURN, "call_1", "in_progress", "a\\x1b[2J\nb"))
        done = ToolCallProgress(
            TURN, "call_1", "completed", "a\x1b[2J\nb\n[exit code: 0]", process_exit=ProcessExit(0)
        )
        await view(done)
        await view(settled(rec.Completed()))
    updates = [u for u in peer.updates() if u["sessionUpdate"] != "state_update"]
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds == [
        "tool_call_update",
        "terminal_update",
        "tool_call_update",
        "terminal_update",
        "terminal_update",
        "tool_call_update",
    ]
    created, opened, started, live, exited, ended = updates
    assert created["title"] == "printf '\\033[2J'; ls" and created["kind"] == "execute"
    assert opened == {
        "sessionUpdate": "terminal_update",
        "terminalId": "call_1",
        "command": "printf '\\033[2J'; ls",
        "cwd": str(tmp_path),
    }
    assert started["content"] == [{"type": "terminal", "terminalId": "call_1"}]
    assert base64.b64decode(live["output"]["data"]) == b"a\\x1b[2J\nb"
    final = base64.b64decode(exited["output"]["data"]).decode()
    assert "\x1b" not in final and "[exit code: 0]" in final  # escaped, as on v1
    assert exited["exitStatus"] == {"exitCode": 0}
    assert ended["status"] == "completed"
    assert ended["content"][0] == {"type": "terminal", "terminalId": "call_1"}


async def test_a_call_the_cancel_stopped_ends_cancelled_and_its_terminal_exited(
    tmp_path: Path,
) -> None:
    async with view_of(tmp_path) as (view, peer):
        await view(TurnStarting(TURN))
        await view(bash("call_1", "sleep 100"))
        await view(ToolCallProgress(TURN, "call_1", "in_progress"))
        await view(ToolCallProgress(TURN, "call_1", "cancelled", "cancelled"))
        await view(settled(rec.Aborted()))
    updates = peer.updates()
    exited = [u for u in updates if u["sessionUpdate"] == "terminal_update"][-1]
    assert exited["exitStatus"] == {}  # exited, how not known
    assert [u for u in updates if u["sessionUpdate"] == "tool_call_update"][-1][
        "status"
    ] == "cancelled"
    assert peer.states() == ["running", "idle:cancelled"]


async def test_a_file_change_is_a_v2_diff_whose_patch_applies(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("one\ntwo\n")
    created = tmp_path / "new.txt"
    async with view_of(tmp_path) as (view, peer):
        await view(TurnStarting(TURN))
        await view(
            ToolCallProgress(
                TURN,
                "call_1",
                "completed",
                "edited",
                diffs=(
                    Diff(str(target), "one\ntwo\n", "one\nTWO\n"),
                    Diff(str(created), None, "fresh\n"),
                ),
            )
        )
        await view(settled(rec.Completed()))
    [ended] = [u for u in peer.updates() if u["sessionUpdate"] == "tool_call_update"]
    modified, added = ended["content"][0], ended["content"][1]
    assert modified["changes"] == [{"operation": "modify", "path": str(target), "fileType": "text"}]
    assert added["changes"] == [{"operation": "add", "path": str(created), "fileType": "text"}]
    await anyio.run_process(["git", "init", "-q", str(tmp_path)])
    for diff in (modified, added):
        patch = tmp_path / "change.patch"
        patch.write_text(diff["patch"]["text"])
        await anyio.run_process(["git", "apply", "--unsafe-paths", "-p0", str(patch)], cwd=tmp_path)
    assert target.read_text() == "one\nTWO\n" and created.read_text() == "fresh\n"


async def test_a_permission_wait_is_requires_action_then_running(tmp_path: Path) -> None:
    async with view_of(tmp_path) as (view, peer):
        peer.answer = lambda params: {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        await view(TurnStarting(TURN))
        await view(bash("call_1", "rm -rf build"))
        holder = TurnCancellation()
        answer = await view.permissions.ask("call_1", "rm -rf build", "it deletes", holder.signal)
        await view(MessageChunk(TURN, "msg_2", "done"))
        await view(settled(rec.Completed()))
    assert answer == "allow_once"
    assert peer.states() == ["running", "requires_action", "running", "idle:end_turn"]
    [request] = [f for f in peer.frames if f.get("method") == "session/request_permission"]
    params = request["params"]
    assert params["title"] == "Allow: rm -rf build?" and params["description"] == "it deletes"
    assert params["subject"] == {
        "type": "command",
        "command": "rm -rf build",
        "cwd": str(tmp_path),
        "toolCallId": "call_1",
    }
    assert params["options"][0]["kind"] == "reject_once"  # the safe choice first
    validate_agent_frame_v2(request)


async def test_a_cancel_while_waiting_goes_from_requires_action_to_idle_cancelled(
    tmp_path: Path,
) -> None:
    async with view_of(tmp_path) as (view, peer):
        never = anyio.Event()
        peer.answer = lambda params: never
        await view(TurnStarting(TURN))
        tool = ToolCallAnnounced(TURN, "call_1", "write_file", "Write a", "edit", {"path": "/a"})
        await view(tool)
        holder = TurnCancellation()
        answers: list[str] = []

        async def ask() -> None:
            try:
                await view.permissions.ask("call_1", "Write a", "", holder.signal)
            except TurnAborted:
                answers.append("aborted")

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await peer.asked.wait()
            holder.abort(UserCancel())
            never.set()
        await view(settled(rec.Aborted()))
    assert answers == ["aborted"]
    assert peer.states() == ["running", "requires_action", "idle:cancelled"]  # never running
    [request] = [f for f in peer.frames if f.get("method") == "session/request_permission"]
    assert request["params"]["subject"] == {
        "type": "tool_call",
        "toolCall": {"toolCallId": "call_1", "rawInput": {"path": "/a"}},
    }
    assert "description" not in request["params"]


async def test_a_failed_turn_is_idle_error_with_its_text_redacted(tmp_path: Path) -> None:
    async with view_of(tmp_path) as (view, peer):
        await view(TurnStarting(TURN))
        failure = rec.ErrorOutcome(message="model failed", code="provider")
        detail = "401 from the provider: bad key sk-abcdefghijklmnop"
        await view(settled(failure, error_detail=detail))
    [idle] = [u for u in peer.updates() if u.get("state") == "idle"]
    assert idle["stopReason"] == "error"
    assert idle["error"]["code"] == -32603
    assert "sk-abcdefghijklmnop" not in idle["error"]["message"]
    assert "The turn failed: 401 from the provider" in idle["error"]["message"]


async def test_a_turn_not_saved_is_idle_error_and_a_blocked_one_refusal(tmp_path: Path) -> None:
    async with view_of(tmp_path) as (view, peer):
        await view(TurnStarting(TURN))
        await view(settled(rec.Completed(), not_saved=OSError(28, "No space left on device")))
        await view(TurnStarting(TURN))
        await view(settled(Blocked("a hook said no")))
    idles = [u for u in peer.updates() if u.get("state") == "idle"]
    assert idles[0]["stopReason"] == "error" and "not saved" in idles[0]["error"]["message"]
    assert idles[0]["error"]["data"]["errno"] == "ENOSPC"
    assert idles[1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"}


async def test_the_plan_is_one_plan_update_and_emptying_it_clears_it(tmp_path: Path) -> None:
    async with view_of(tmp_path) as (view, peer):
        await view(TurnStarting(TURN))
        await view(PlanUpdated(TURN, ()))  # never shown: nothing to clear
        await view(PlanUpdated(TURN, (PlanItem("write tests", "high", "in_progress"),)))
        await view(PlanUpdated(TURN, ()))
        await view(settled(rec.Completed()))
    plans = [u for u in peer.updates() if u["sessionUpdate"] == "plan_update"]
    assert [p["plan"]["entries"] for p in plans] == [
        [{"content": "write tests", "priority": "high", "status": "in_progress"}],
        [],
    ]
    assert {p["plan"]["planId"] for p in plans} == {"todo"}


async def test_nothing_is_sent_for_a_closed_session(tmp_path: Path) -> None:
    async with presented(tmp_path) as (view, peer, presenter):
        await view(TurnStarting(TURN))
        presenter.closed(SESSION)
        await view(MessageChunk(TURN, "msg_1", "late"))
        await view(settled(rec.Aborted()))
    assert peer.states() == ["running"]
    assert [u["sessionUpdate"] for u in peer.updates()] == ["state_update"]
