"""The bridge's rewind (acp_server/acp/rewind.py): `/rewind` lists the latest turns, and a
rewind cancelled through the wire, seen from inside the process: `$/cancel_request` for a
`_session/rewind`, and `session/cancel` during `/rewind N`, each arriving while the rewind is
held at one of its seams (after one file was restored; just before the record). The files stay
byte-identical, the journal gets no `session/rewind` line, and the answers say so (-32800; the
`/rewind` answer). Seams are held by wrapping the bridge's `rewind_to` so that it waits for the
rewind's own signal there: no timing is involved. The engine's seams themselves are tested in
tests/agent/test_rewind.py; the whole flow through the real process in
tests/e2e/test_rewind_acp.py. Every agent frame is schema-checked (tests/support/bridge.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.acp import rewind as bridge_rewind
from acp_server.acp.rewind_text import rewind_text
from acp_server.agent import RewindDone, rewind_to
from acp_server.cancellation import TurnSignal
from acp_server.session import records as rec
from acp_server.session.rewind import Turn
from tests.support.agent_harness import FakeModel, call, say
from tests.support.bridge import Bridge, in_process_bridge

pytestmark = pytest.mark.anyio

AT = "2026-12-02T00:00:00.000Z"


def test_the_listing_shows_the_latest_hundred_turns() -> None:
    turns = [
        Turn(
            n,
            f"t{n}",
            rec.UserMessage(
                message_id=f"m{n}",
                content=[rec.TextPart(text=f"prompt {n}\nmore")],
                origin="prompt",
                turn_id=f"t{n}",
                at=AT,
            ),
            None,
        )
        for n in range(1, 131)
    ]
    lines = bridge_rewind.listing(turns).splitlines()
    assert lines[1] == "(30 earlier turns not listed)"
    assert lines[2] == "31. prompt 31"  # the first line of each prompt
    assert lines[-1] == "130. prompt 130"
    assert bridge_rewind.listing([]) == "There is no turn to rewind to."


def hold_at(monkeypatch: pytest.MonkeyPatch, seam: str, held: anyio.Event) -> None:
    """Make the bridge's rewinds wait at `seam` (the second "restore": after one file was
    restored) until their signal aborts."""

    async def held_rewind(*args: Any, signal: TurnSignal, **kwargs: Any) -> Any:
        seen: list[str] = []

        async def wait_for_cancel(name: str) -> None:
            seen.append(name)
            if name == seam and (seam != "restore" or seen.count(name) == 2):
                held.set()
                await signal.wait()

        return await rewind_to(*args, signal=signal, seam=wait_for_cancel, **kwargs)

    monkeypatch.setattr(bridge_rewind, "rewind_to", held_rewind)


async def one_turn(bridge: Bridge, ws: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A session whose one turn overwrote a.txt and created b.txt (in bypass mode)."""
    monkeypatch.setenv("ACP_SERVER_SANDBOXED", "1")  # bypass is refused to root otherwise
    sid = await bridge.new_session(ws)
    await bridge.call("session/set_mode", {"sessionId": sid, "modeId": "bypass"})
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
    assert (await bridge.call("session/prompt", prompt))["stopReason"] == "end_turn"
    return sid


def model() -> FakeModel:
    return FakeModel(
        (call("write_file", path="a.txt", content="agent a\n"),),
        (call("write_file", path="b.txt", content="agent b\n"),),
        (say("done"),),
    )


def journal_types(bridge: Bridge, sid: str) -> list[str]:
    lines = bridge.journal_path(sid).read_bytes().splitlines()[1:]
    return [json.loads(line)["type"] for line in lines]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = Path(os.path.realpath(tmp_path / "ws"))
    path.mkdir()
    (path / "a.txt").write_text("before a\n")
    return path


@pytest.mark.parametrize("seam", ["restore", "record"])
async def test_cancel_request_stops_a_session_rewind_with_nothing_changed(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch, seam: str
) -> None:
    async with in_process_bridge(model(), tmp_path / "data") as bridge:
        sid = await one_turn(bridge, ws, monkeypatch)
        before = journal_types(bridge, sid)
        held = anyio.Event()
        hold_at(monkeypatch, seam, held)
        first = "sha256:" + hashlib.sha256(b"go").hexdigest()
        request_id = await bridge.send_request(
            "_session/rewind", {"sessionId": sid, "beforeMessage": {"messageFingerprint": first}}
        )
        await held.wait()
        assert (ws / "a.txt").read_text() == "before a\n"  # restored before the hold
        if seam == "record":  # both were
            assert not (ws / "b.txt").exists()
        await bridge.notify("$/cancel_request", {"requestId": request_id})
        answer = await bridge.response(request_id)
        assert answer["error"]["code"] == -32800
        assert "the files and the conversation are as they were" in answer["error"]["data"]
        assert (ws / "a.txt").read_text() == "agent a\n"
        assert (ws / "b.txt").read_text() == "agent b\n"
        assert journal_types(bridge, sid) == before
        assert "session/rewind" not in before


async def test_session_cancel_stops_a_rewind_command(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with in_process_bridge(model(), tmp_path / "data") as bridge:
        sid = await one_turn(bridge, ws, monkeypatch)
        before = journal_types(bridge, sid)
        held = anyio.Event()
        hold_at(monkeypatch, "restore", held)
        rewind = {"sessionId": sid, "prompt": [{"type": "text", "text": "/rewind 1"}]}
        request_id = await bridge.send_request("session/prompt", rewind)
        await held.wait()
        # Meanwhile a prompt is refused: no turn may start while files are being restored.
        other = {"sessionId": sid, "prompt": [{"type": "text", "text": "more"}]}
        refused = await bridge.response(await bridge.send_request("session/prompt", other))
        assert refused["error"]["code"] == -32600
        await bridge.notify("session/cancel", {"sessionId": sid})
        answer = await bridge.response(request_id)
        assert answer["result"]["stopReason"] == "end_turn"
        texts = [
            f["params"]["update"]["content"]["text"]
            for f in bridge.frames
            if f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        assert texts[-1] == (
            "The rewind was cancelled: the files and the conversation are as they were."
        )
        assert (ws / "a.txt").read_text() == "agent a\n"
        assert journal_types(bridge, sid) == before


async def test_closing_the_session_stops_its_rewind_with_nothing_changed(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`session/close` during a rewind (held once both files were restored) stops it: the
    journal it closes gets no `session/rewind` line, and the files get the agent's content
    back; else the files would stay restored while the conversation is not cut."""
    async with in_process_bridge(model(), tmp_path / "data") as bridge:
        sid = await one_turn(bridge, ws, monkeypatch)
        before = journal_types(bridge, sid)
        held = anyio.Event()
        hold_at(monkeypatch, "record", held)
        first = "sha256:" + hashlib.sha256(b"go").hexdigest()
        request_id = await bridge.send_request(
            "_session/rewind", {"sessionId": sid, "beforeMessage": {"messageFingerprint": first}}
        )
        await held.wait()
        assert (ws / "a.txt").read_text() == "before a\n"
        assert await bridge.call("session/close", {"sessionId": sid}) == {}
        answer = await bridge.response(request_id)
        assert answer["error"]["code"] == -32800
        assert (ws / "a.txt").read_text() == "agent a\n"
        assert (ws / "b.txt").read_text() == "agent b\n"
        assert journal_types(bridge, sid) == before


async def test_a_rewind_not_saved_yet_says_so_apart_from_its_notice(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notice keeps the rewind's id and the words its replay shows; that the journal could
    not take it yet is a second message, under an id of its own (it is about that moment)."""

    async def unsaved_rewind(*args: Any, **kwargs: Any) -> RewindDone:
        done = await rewind_to(*args, **kwargs)
        return dataclasses.replace(done, not_saved=OSError("No space left on device"))

    async with in_process_bridge(model(), tmp_path / "data") as bridge:
        sid = await one_turn(bridge, ws, monkeypatch)
        monkeypatch.setattr(bridge_rewind, "rewind_to", unsaved_rewind)
        rewind = {"sessionId": sid, "prompt": [{"type": "text", "text": "/rewind 1"}]}
        assert (await bridge.call("session/prompt", rewind))["stopReason"] == "end_turn"
        *_, notice, note = [
            f["params"]["update"]
            for f in bridge.frames
            if f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        [record] = [r for r in bridge.agent(sid).session.records if isinstance(r, rec.Rewind)]
    assert notice["messageId"] == record.rewind_id
    assert notice["content"]["text"] == rewind_text(record, 1, str(ws))
    assert note["messageId"] != record.rewind_id
    assert note["content"]["text"].startswith(
        "The rewind is not saved to the data directory yet (No space left on device)"
    )
