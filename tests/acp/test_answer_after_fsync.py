"""A `session/prompt` is answered only after its turn is on disk.

A SIGKILL cannot show this (the page cache survives a process kill), so the order is observed
in process: the journal's fsync is instrumented through its module-level helper (the test's
seam; production calls it unchanged), and every frame the agent writes is recorded by the
bridge's stdout. The prompt's response must come after an fsync of that session's journal
that returned with the turn's `turn/end` already in the file. See
docs/rfc/implemented/architecture/2026-11-30-session-journal.md.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from acp_server.session import journal_fs
from tests.support.agent_harness import FakeModel, say, wait_for_abort
from tests.support.bridge import DEADLINE, Bridge, in_process_bridge

pytestmark = pytest.mark.anyio


def _instrument_fsync(monkeypatch: pytest.MonkeyPatch, bridge: Bridge) -> None:
    """Record ("fsync", (inode, bytes on disk)) in the bridge's events as each fsync returns."""
    fsync_and_close = journal_fs.fsync_and_close

    def observed(fd: int) -> None:
        stat = os.fstat(fd)
        fsync_and_close(fd)
        bridge.events.append(("fsync", (stat.st_ino, stat.st_size)))

    monkeypatch.setattr(journal_fs, "fsync_and_close", observed)


def _turn_end_offsets(journal: Path) -> list[int]:
    """Byte offset just past each `turn/end` line of a journal."""
    offsets = []
    position = 0
    for line in journal.read_bytes().splitlines(keepends=True):
        position += len(line)
        if json.loads(line).get("type") == "turn/end":
            offsets.append(position)
    return offsets


async def test_each_prompt_is_answered_after_its_turn_end_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with in_process_bridge(FakeModel(), tmp_path / "data") as bridge:
        session_id = await bridge.new_session(tmp_path)
        _instrument_fsync(monkeypatch, bridge)
        journal = bridge.journal_path(session_id)
        inode = journal.stat().st_ino
        responses = []
        for text in ("first", "second"):
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
            request_id = await bridge.send_request("session/prompt", prompt)
            answer = await bridge.response(request_id)
            assert answer["result"] == {"stopReason": "end_turn"}
            responses.append(request_id)
        events = list(bridge.events)

    ends = _turn_end_offsets(journal)
    assert len(ends) == 2
    for request_id, turn_end in zip(responses, ends, strict=True):
        (answered,) = [
            index
            for index, (kind, value) in enumerate(events)
            if kind == "write" and value.get("id") == request_id and "method" not in value
        ]
        durable = [
            index
            for index, (kind, value) in enumerate(events[:answered])
            if kind == "fsync" and value[0] == inode and value[1] >= turn_end
        ]
        assert durable, f"response {request_id} was written before its turn/end was fsynced"


async def test_a_cancelled_prompt_is_answered_after_its_turn_end_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cancel path keeps the promise: `cancelled` is written only after an fsync that
    returned with the aborted turn's `turn/end` in the file (the cancel-latency RFC)."""
    entered = anyio.Event()
    model = FakeModel([say("working"), wait_for_abort(entered)])
    async with in_process_bridge(model, tmp_path / "data") as bridge:
        session_id = await bridge.new_session(tmp_path)
        _instrument_fsync(monkeypatch, bridge)
        journal = bridge.journal_path(session_id)
        inode = journal.stat().st_ino
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        request_id = await bridge.send_request("session/prompt", prompt)
        await entered.wait()
        await bridge.notify("session/cancel", {"sessionId": session_id})
        answer = await bridge.response(request_id)
        events = list(bridge.events)

    assert answer["result"] == {"stopReason": "cancelled"}
    (turn_end,) = _turn_end_offsets(journal)
    (answered,) = [
        index
        for index, (kind, value) in enumerate(events)
        if kind == "write" and value.get("id") == request_id and "method" not in value
    ]
    assert [
        value
        for kind, value in events[:answered]
        if kind == "fsync" and value[0] == inode and value[1] >= turn_end
    ], "the cancelled answer was written before its turn/end was fsynced"


async def test_a_held_fsync_holds_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the turn's fsync has not returned, the prompt's response is not on the wire,
    whatever else runs meanwhile (the order, not a race between a fast disk and the writer)."""
    entered = threading.Event()
    release = threading.Event()
    fsync_and_close = journal_fs.fsync_and_close

    def held(fd: int) -> None:
        entered.set()
        release.wait(DEADLINE)  # bounded: a broken runtime fails the test, never hangs it
        fsync_and_close(fd)

    async with in_process_bridge(FakeModel(), tmp_path / "data") as bridge:
        session_id = await bridge.new_session(tmp_path)
        monkeypatch.setattr(journal_fs, "fsync_and_close", held)
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        request_id = await bridge.send_request("session/prompt", prompt)
        assert await anyio.to_thread.run_sync(entered.wait, DEADLINE)
        await anyio.wait_all_tasks_blocked()  # the writer has written all it was given
        answered = [f for f in bridge.frames if f.get("id") == request_id]
        release.set()
        assert answered == []
        assert (await bridge.response(request_id))["result"] == {"stopReason": "end_turn"}
