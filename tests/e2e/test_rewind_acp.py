"""Checkpoints and rewind through the real `acp-server` process and the official SDK client:
`/rewind` lists the turns, `/rewind N` restores what the file tools changed since turn N and
cuts the conversation, a file edited by hand since is reported and left, `bash`'s commands are
named as not restored, `session/load` replays the cut conversation with the rewind's notice,
and `_session/rewind` (the AIR contract of the Claude and Codex adapters) does the same by
message id or fingerprint (or cuts the conversation only), refused while a turn runs. Every
agent frame is schema-checked (tests/support/agent_process.py).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError

from tests.support.raw_client import RawClient, new_session, new_session_v2, raw_agent, text
from tests.support.scripted_model import script
from tests.support.tool_client import SANDBOXED, Session, agent_session, call
from tests.support.wire_v2 import validate_agent_frame_v2

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "a.txt").write_text("original a\n")
    (path / "b.txt").write_text("original b\n")
    return Path(os.path.realpath(path))


def three_turns(tmp_path: Path) -> str:
    """Turn 1 writes a.txt; turn 2 edits it, creates new.txt and runs bash; turn 3 writes b.txt."""
    return script(
        tmp_path,
        call("write_file", path="a.txt", content="turn one\n"),
        [{"text": "one done"}],
        call("edit_file", path="a.txt", old_text="turn one", new_text="turn two"),
        call("write_file", path="new.txt", content="created\n"),
        call("bash", command="echo made by bash > c.txt"),
        [{"text": "two done"}],
        call("write_file", path="b.txt", content="turn three\n"),
        [{"text": "three done"}],
    )


def said(session: Session) -> list[str]:
    return [u.content.text for u in session.client.kinds("agent_message_chunk")]


def user_ids(session: Session) -> dict[str, str]:
    """Replayed prompt text -> its message id."""
    return {u.content.text: u.message_id for u in session.client.kinds("user_message_chunk")}


async def run_three_turns(session: Session) -> None:
    for words in ("first", "second", "third"):
        assert await session.prompt(words) == "end_turn"


async def test_rewind_restores_the_file_tools_changes_and_cuts_the_conversation(
    tmp_path: Path, ws: Path
) -> None:
    spec = three_turns(tmp_path)
    data = tmp_path / "data"
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED, data_dir=data) as s:
        await run_three_turns(s)
        assert (ws / "a.txt").read_text() == "turn two\n"
        assert (ws / "c.txt").read_text() == "made by bash\n"
        (ws / "b.txt").write_text("edited by hand\n")  # after the agent's turn 3
        assert await s.prompt("/rewind") == "end_turn"
        assert await s.prompt("/rewind 9") == "end_turn"
        assert await s.prompt("/rewind ²") == "end_turn"  # a digit, but not a decimal one
        assert await s.prompt("/rewind " + "1" * 5000) == "end_turn"  # past int()'s limit
        assert await s.prompt("/rewind 2") == "end_turn"
        listing, wrong, superscript, long, done = said(s)[-5:]
        assert await s.prompt("fourth") == "end_turn"  # the script starts over: turn 1's write
    assert "1. first\n2. second\n3. third" in listing
    assert wrong == "The conversation was not rewound: '9' is not a turn number (1 to 3)."
    assert superscript == "The conversation was not rewound: '²' is not a turn number (1 to 3)."
    assert long.startswith("The conversation was not rewound: '1111")
    assert long.endswith("...' is not a turn number (1 to 3).")
    # Turn 2's edit is undone (back to turn 1's write), its new file is gone; b.txt was edited
    # by hand since turn 3 wrote it: left as it is, and said; bash's file stays, and is named.
    assert (ws / "a.txt").read_text() == "turn one\n"
    assert not (ws / "new.txt").exists()
    assert (ws / "b.txt").read_text() == "edited by hand\n"
    assert (ws / "c.txt").exists()
    assert done.startswith("Rewound the conversation to before turn 2.\nRestored: a.txt, new.txt.")
    blob = data / "checkpoints" / hashlib.sha256(b"original b\n").hexdigest()[:2]
    kept = blob / hashlib.sha256(b"original b\n").hexdigest()
    assert (
        f"Not restored: b.txt: it was changed outside the agent since turn 2 (its content "
        f"before is kept at {kept})." in done
    )
    assert kept.read_bytes() == b"original b\n"
    assert "`echo made by bash > c.txt`" in done and "bash commands" in done

    # Reloaded: turn 1, the notice, then the turn after the rewind; not turns 2 and 3.
    async with agent_session(ws, spec, env=SANDBOXED, data_dir=data, load=s.sid) as loaded:
        assert list(user_ids(loaded)) == ["first", "fourth"]
        texts = said(loaded)
        assert texts[0] == "one done"
        assert texts[1] == done  # the notice in the words it was said live
        assert texts[2:] == ["one done"]


async def test_session_rewind_extension_by_message_id_and_fingerprint(
    tmp_path: Path, ws: Path
) -> None:
    spec = three_turns(tmp_path)
    data = tmp_path / "data"
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED, data_dir=data) as s:
        await run_three_turns(s)
    async with agent_session(ws, spec, env=SANDBOXED, data_dir=data, load=s.sid) as loaded:
        ids = user_ids(loaded)
        replies = [u.message_id for u in loaded.client.kinds("agent_message_chunk")]
        with pytest.raises(RequestError) as stale:  # a fingerprint that is not the message's
            await loaded.conn.ext_method(
                "session/rewind",
                {
                    "sessionId": loaded.sid,
                    "beforeMessage": {"messageId": ids["third"], "messageFingerprint": "sha256:0"},
                },
            )
        assert stale.value.code == -32602
        # Conversation only (a client restoring files itself); others' `_meta` is not ours.
        result = await loaded.conn.ext_method(
            "session/rewind",
            {
                "sessionId": loaded.sid,
                "beforeMessage": {"messageId": ids["third"]},
                "resumeAtMessage": {"messageId": replies[1]},
                "_meta": {"acp-server": {"restoreFiles": False}, "example.com/trace": "x"},
            },
        )
        assert result["rewound"] is True
        assert result["_meta"]["acp-server"]["restored"] == []
        assert (ws / "b.txt").read_text() == "turn three\n"
        # By fingerprint alone (what a client sends when ids changed): turn 1.
        first = "sha256:" + hashlib.sha256(b"first").hexdigest()
        result = await loaded.conn.ext_method(
            "session/rewind",
            {"sessionId": loaded.sid, "beforeMessage": {"messageFingerprint": first}},
        )
        meta: dict[str, Any] = result["_meta"]["acp-server"]
        assert meta["turn"] == 1
        assert meta["restored"] == [str(ws / "a.txt"), str(ws / "new.txt")]
        assert meta["commands"] == ["echo made by bash > c.txt"]
        assert (ws / "a.txt").read_text() == "original a\n"
        assert not (ws / "new.txt").exists()
    async with agent_session(ws, spec, env=SANDBOXED, data_dir=data, load=s.sid) as again:
        assert user_ids(again) == {}


async def test_a_rewind_is_refused_while_a_turn_runs(tmp_path: Path, ws: Path) -> None:
    spec = script(
        tmp_path,
        call("write_file", path="a.txt", content="turn one\n"),
        [{"text": "one done"}],
        [{"text": "working"}, {"delay_ms": 60000}],
    )
    async with agent_session(ws, spec, "--mode", "bypass", env=SANDBOXED) as s:
        assert await s.prompt("first") == "end_turn"
        async with anyio.create_task_group() as tg:
            stops: list[str] = []

            async def second() -> None:
                stops.append(await s.prompt("second"))

            tg.start_soon(second)
            await s.client.wait_for_updates(len(s.client.updates) + 2)  # "second", "working"
            assert said(s)[-1] == "working"
            with pytest.raises(RequestError) as refused:
                await s.conn.ext_method(
                    "session/rewind",
                    {"sessionId": s.sid, "beforeMessage": {"messageFingerprint": "sha256:x"}},
                )
            await s.conn.cancel(session_id=s.sid)
        assert stops == ["cancelled"]
        assert (ws / "a.txt").read_text() == "turn one\n"
    assert refused.value.code == -32600
    assert "a turn is running in this session" in str(refused.value.data)


def notices(client: RawClient, session_id: str) -> list[tuple[str, str]]:
    """(messageId, text) of each rewind notice the client was sent."""
    return [
        (u["messageId"], u["content"]["text"])
        for u in client.updates(session_id)
        if u["sessionUpdate"] == "agent_message_chunk"
        and u["content"]["text"].startswith("Rewound the conversation")
    ]


async def said_and_done(client: RawClient, session_id: str, words: str, version: int) -> None:
    """One prompt, to its end: its answer on v1, its idle on v2."""
    idles = len([u for u in client.updates(session_id) if u.get("state") == "idle"])
    await client.call("session/prompt", {"sessionId": session_id, "prompt": text(words)})
    if version == 2:
        await client.wait_for(
            lambda _: (
                len([u for u in client.updates(session_id) if u.get("state") == "idle"]) > idles
            )
        )


@pytest.mark.parametrize("version", [1, 2])
async def test_a_rewind_notice_is_replayed_under_its_live_id_in_its_live_words(
    tmp_path: Path, ws: Path, version: int
) -> None:
    """Two rewinds, the second cutting before the turns the first counted: the replay (v1's
    load, v2's resume) shows each notice as it was said, turn number included."""
    argv = ("--model", three_turns(tmp_path), "--mode", "bypass")
    argv += ("--data-dir", str(tmp_path / "data"))
    check = {"validate": validate_agent_frame_v2} if version == 2 else {}
    async with raw_agent(*argv, env=SANDBOXED, **check) as client:
        sid = await (new_session_v2 if version == 2 else new_session)(client, str(ws))
        for words in ("first", "second", "third", "/rewind 3", "/rewind 1"):
            await said_and_done(client, sid, words, version)
        live = notices(client, sid)
    assert [t.splitlines()[0] for _, t in live] == [
        "Rewound the conversation to before turn 3.",
        "Rewound the conversation to before turn 1.",
    ]
    async with raw_agent(*argv, env=SANDBOXED, **check) as client:
        if version == 2:
            hello = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}
            await client.call("initialize", hello)
            replay = {"sessionId": sid, "cwd": str(ws), "replayFrom": {"type": "start"}}
            await client.call("session/resume", replay)
        else:
            await client.call("initialize", {"protocolVersion": 1})
            await client.call("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        assert notices(client, sid) == live
