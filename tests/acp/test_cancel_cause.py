"""What the ACP bridge asks of the runtime when a client cancels, seen from inside the process.

A client only sees `cancelled`; the cause the bridge passes to `Agent.cancel()` is invisible on
the wire. These tests install a cancel-requested listener on the session's agent and check
that every client-initiated stop (`session/cancel`, with or without keepInbox,
`$/cancel_request` for a running prompt, `session/close`) arrives as `UserCancel`, and that a
step failing after the cancel still ends the turn `{"kind":"aborted"}` and answers
`cancelled`. See docs/rfc/implemented/architecture/2026-11-30-explicit-turn-cancellation.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.cancellation import CancelCause, TurnSignal, UserCancel
from acp_server.models.base import ModelError, ModelRequest
from tests.support.agent_harness import FakeModel, say
from tests.support.bridge import Bridge, in_process_bridge

pytestmark = pytest.mark.anyio


def _parked_model(entered: anyio.Event, *, fail_after_cancel: bool = False) -> FakeModel:
    """A model whose first request streams a word, then waits for the turn's signal; after the
    cancel it either stops cooperatively or fails as a provider would when its stream is cut."""

    async def park(request: ModelRequest, signal: TurnSignal) -> object:
        entered.set()
        await signal.wait()
        if fail_after_cancel:
            raise ModelError("connection reset while streaming")
        signal.raise_if_aborted()
        return None

    return FakeModel([say("working"), park])


async def _running_prompt(
    bridge: Bridge, tmp_path: Path, entered: anyio.Event
) -> tuple[str, int, list[CancelCause]]:
    session_id = await bridge.new_session(tmp_path)
    causes: list[CancelCause] = []
    bridge.agent(session_id).on_cancel_requested(causes.append)
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    request_id = await bridge.send_request("session/prompt", prompt)
    await entered.wait()
    return session_id, request_id, causes


def _turn_end_lines(bridge: Bridge, session_id: str) -> list[dict[str, Any]]:
    path = bridge.journal_path(session_id)
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    return [line for line in lines if line.get("type") == "turn/end"]


@pytest.mark.parametrize("meta", [None, {"acp-server": {"keepInbox": True}}])
async def test_session_cancel_reaches_the_agent_as_a_user_cancel(
    tmp_path: Path, meta: dict[str, Any] | None
) -> None:
    entered = anyio.Event()
    async with in_process_bridge(_parked_model(entered), tmp_path / "data") as bridge:
        session_id, request_id, causes = await _running_prompt(bridge, tmp_path, entered)
        params: dict[str, Any] = {"sessionId": session_id}
        if meta is not None:
            params["_meta"] = meta
        await bridge.notify("session/cancel", params)
        answer = await bridge.response(request_id)
        assert answer["result"] == {"stopReason": "cancelled"}
        assert causes == [UserCancel()]
        assert type(causes[0]) is UserCancel


async def test_cancel_request_for_the_running_prompt_is_a_user_cancel(tmp_path: Path) -> None:
    entered = anyio.Event()
    async with in_process_bridge(_parked_model(entered), tmp_path / "data") as bridge:
        _, request_id, causes = await _running_prompt(bridge, tmp_path, entered)
        await bridge.notify("$/cancel_request", {"requestId": request_id})
        answer = await bridge.response(request_id)
        assert answer["result"] == {"stopReason": "cancelled"}
        assert causes == [UserCancel()]


async def test_session_close_cancels_the_running_turn_as_the_user(tmp_path: Path) -> None:
    entered = anyio.Event()
    async with in_process_bridge(_parked_model(entered), tmp_path / "data") as bridge:
        session_id, request_id, causes = await _running_prompt(bridge, tmp_path, entered)
        closed = await bridge.send_request("session/close", {"sessionId": session_id})
        assert (await bridge.response(request_id))["result"] == {"stopReason": "cancelled"}
        assert (await bridge.response(closed))["result"] == {}
        assert causes == [UserCancel()]


async def test_a_step_failing_after_the_cancel_still_ends_aborted(tmp_path: Path) -> None:
    entered = anyio.Event()
    model = _parked_model(entered, fail_after_cancel=True)
    async with in_process_bridge(model, tmp_path / "data") as bridge:
        session_id, request_id, _ = await _running_prompt(bridge, tmp_path, entered)
        await bridge.notify("session/cancel", {"sessionId": session_id})
        answer = await bridge.response(request_id)
        assert answer == {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "cancelled"}}
        await bridge.agent(session_id).when_idle()
        (end,) = _turn_end_lines(bridge, session_id)
        assert end["outcome"] == {"kind": "aborted"}
