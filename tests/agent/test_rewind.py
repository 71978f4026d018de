"""Rewinds on real files in-process: the file tools' checkpoints, what a rewind restores and
what it leaves (edited by hand, over the cap, now a FIFO, a directory or a symbolic link,
outside the roots), the exact guarantee of a cancelled rewind (cancelled while restoring
files, or just before the record: the files and the log as they were), and the conversation
the model is sent afterwards (what `session/load` rebuilds is checked in
tests/e2e/test_rewind_acp.py; the bridge's side, its listing and cancels through the wire, in
tests/acp/test_rewind.py)."""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

import anyio
import pytest

from acp_server.agent.conversation import Conversation
from acp_server.agent.rewind import RewindDone, RewindFailed, rewind_to, session_turns
from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.models.base import AssistantMessage, UserMessage
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.session.rewind import retained
from acp_server.session.state import SessionState
from acp_server.tools.builtin.files import EditFile, WriteFile
from acp_server.tools.checkpoint_store import CheckpointStore
from acp_server.tools.checkpoints import Checkpoints
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.workspace import PathRoots
from tests.support.tool_call import a_call

pytestmark = pytest.mark.anyio

AT = "2026-12-02T00:00:00.000Z"


class World:
    """A workspace, a checkpoint store and a session log written by the real file tools."""

    def __init__(
        self, tmp_path: Path, max_bytes: int = 1 << 20, store_bytes: int = 1 << 30
    ) -> None:
        self.ws = Path(os.path.realpath(tmp_path / "ws"))
        self.ws.mkdir()
        self.store = CheckpointStore(tmp_path / "data" / "checkpoints", store_bytes)
        self.path_roots = PathRoots(str(self.ws))
        keeper = Checkpoints(self.store, max_bytes)
        self.write = WriteFile(self.path_roots, LocalFiles(), keeper)
        self.edit = EditFile(self.path_roots, LocalFiles(), keeper)
        self.log = SessionLog("s")
        self.conversation = Conversation()
        self.log.on_append(self.conversation.add)
        self._ids = itertools.count(1)

    def ids(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    async def turn(self, prompt: str, *calls: tuple[str, dict[str, str]]) -> None:
        """One turn whose model calls `calls` (tool name, arguments), then answers."""
        turn_id = self.ids("turn")
        self.log.append(rec.TurnStart(turn_id=turn_id, at=AT))
        self.log.append(
            rec.UserMessage(
                message_id=self.ids("msg"),
                content=[rec.TextPart(text=prompt)],
                origin="prompt",
                turn_id=turn_id,
                at=AT,
            )
        )
        for name, arguments in calls:
            call_id = self.ids("call")
            self.log.append(
                rec.AssistantMessage(
                    turn_id=turn_id,
                    message_id=self.ids("msg"),
                    parts=[],
                    tool_calls=[
                        rec.ToolCallRecord(call_id=call_id, name=name, arguments=arguments)
                    ],
                    at=AT,
                )
            )
            tool = {"write_file": self.write, "edit_file": self.edit}.get(name)
            output = (
                await tool.run(arguments, a_call(), TurnCancellation().signal) if tool else None
            )
            self.log.append(
                rec.ToolResult(
                    turn_id=turn_id,
                    call_id=call_id,
                    status="failed" if output is None or output.failed else "completed",
                    output=output.text if output else "ran",
                    checkpoints=list(output.checkpoints) if output else [],
                    at=AT,
                )
            )
        self.log.append(
            rec.AssistantMessage(
                turn_id=turn_id,
                message_id=self.ids("msg"),
                parts=[rec.TextPart(text=f"answer to {prompt}")],
                at=AT,
            )
        )
        self.log.append(rec.TurnEndRecord(turn_id=turn_id, outcome=rec.Completed(), at=AT))

    async def rewind(self, number: int, **kwargs: object) -> RewindDone:
        turn = session_turns(self.log)[number - 1]
        signal = kwargs.pop("signal", TurnCancellation().signal)
        return await rewind_to(
            self.log,
            turn,
            store=self.store,
            path_roots=self.path_roots,
            signal=signal,  # type: ignore[arg-type]
            ids=self.ids,
            **kwargs,  # type: ignore[arg-type]
        )

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in self.ws.iterdir() if p.is_file()}


def write(path: str, content: str) -> tuple[str, dict[str, str]]:
    return "write_file", {"path": path, "content": content}


async def test_rewind_restores_files_and_cuts_the_model_context(tmp_path: Path) -> None:
    w = World(tmp_path)
    (w.ws / "a.txt").write_bytes(b"\xff binary, not UTF-8 \xfe")
    await w.turn("one", write("a.txt", "one\n"))
    await w.turn(
        "two",
        ("edit_file", {"path": "a.txt", "old_text": "one", "new_text": "two"}),
        write("sub/new.txt", "new\n"),
        ("bash", {"command": "touch made.txt"}),
        ("task", {"prompt": "fix it", "description": "Fix the tests"}),
    )
    await w.turn("three", write("a.txt", "three\n"))
    done = await w.rewind(2)
    assert w.files() == {"a.txt": b"one\n"}
    assert done.record.restored == [str(w.ws / "a.txt"), str(w.ws / "sub/new.txt")]
    assert done.record.commands == ["touch made.txt"]
    assert done.record.tasks == ["Fix the tests"]
    # The model is sent turn 1 only, and a rebuilt conversation agrees.
    prompts = [i.parts[0].text for i in w.conversation.items if isinstance(i, UserMessage)]  # type: ignore[union-attr]
    assert prompts == ["one"]
    rebuilt = Conversation(w.log.records)
    assert rebuilt.items == w.conversation.items
    assert [t.number for t in session_turns(w.log)] == [1]
    # The bytes before the first write come back exactly, binary or not.
    await w.rewind(1)
    assert w.files() == {"a.txt": b"\xff binary, not UTF-8 \xfe"}
    assert not [i for i in w.conversation.items if isinstance(i, AssistantMessage)]
    # A reloaded session's deterministic ids skip the rewinds' ids too (they are message ids
    # on replay).
    assert done.record.rewind_id in SessionState.of(w.log.records).ids
    # The log keeps everything; only the retained view drops the turns.
    assert sum(isinstance(r, rec.Rewind) for r in w.log.records) == 2
    assert [type(r) for r in retained(w.log.records)] == [rec.Rewind, rec.Rewind]


NAMES = ("hand", "fifo", "dir", "link", "big")


def text(path: str) -> str:
    with open(path) as file:
        return file.read()


async def test_hostile_files_are_reported_and_left(tmp_path: Path) -> None:
    w = World(tmp_path, max_bytes=64)
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    for name in NAMES:
        (w.ws / f"{name}.txt").write_text(name + "\n")
    (w.ws / "big.txt").write_text("x" * 100)
    await w.turn(
        "one",
        *(
            write(f"{name}.txt", f"agent {name}\n")
            for name in ("hand", "fifo", "dir", "link", "big")
        ),
    )
    big = next(r for r in w.log.records if isinstance(r, rec.ToolResult) and "big" in r.output)
    assert big.output.endswith(
        "(not kept for /rewind: it is 100 bytes, over the checkpoint cap of 64 bytes "
        "([tools] max_checkpoint_bytes))"
    )
    (w.ws / "hand.txt").write_text("edited by hand\n")
    (w.ws / "fifo.txt").unlink()
    os.mkfifo(w.ws / "fifo.txt")
    (w.ws / "dir.txt").unlink()
    (w.ws / "dir.txt").mkdir()
    (w.ws / "link.txt").unlink()
    (w.ws / "link.txt").symlink_to(outside)
    with anyio.fail_after(10):  # a FIFO is never opened for reading: nothing blocks
        done = await w.rewind(1)
    reasons = {Path(k.path).name: k.reason for k in done.record.kept}
    assert reasons["hand.txt"] == "it was changed outside the agent since turn 1"
    assert reasons["fifo.txt"].startswith("it is now a ") and "FIFO" in reasons["fifo.txt"]
    assert reasons["dir.txt"] == "it is now a directory"
    assert reasons["link.txt"] == "it is now (or lies behind) a symbolic link; not followed"
    assert reasons["big.txt"].startswith("its content before was not kept: it is 100 bytes")
    assert "[tools] max_checkpoint_bytes" in reasons["big.txt"]
    assert done.record.restored == []
    assert outside.read_text() == "outside\n"  # never written through the link
    assert (w.ws / "hand.txt").read_text() == "edited by hand\n"
    hand = next(k for k in done.record.kept if k.path.endswith("hand.txt"))
    assert hand.kept_at is not None and text(hand.kept_at) == "hand\n"


async def test_an_evicted_checkpoint_is_reported_not_restorable_and_the_rest_rewinds(
    tmp_path: Path,
) -> None:
    w = World(tmp_path, store_bytes=150)
    (w.ws / "a.txt").write_bytes(b"a before\n" * 10)  # 90 bytes
    (w.ws / "b.txt").write_bytes(b"b before\n" * 10)
    await w.turn("one", write("a.txt", "agent a\n"))
    await w.turn("two", write("b.txt", "agent b\n"))  # evicts a's content: 180 > 150
    assert w.store.total_bytes() == 90
    done = await w.rewind(1)
    assert done.record.restored == [str(w.ws / "b.txt")]
    [kept] = done.record.kept
    assert kept.path == str(w.ws / "a.txt") and kept.kept_at is None
    assert kept.reason.startswith("not restorable: its content before is no longer in the")
    assert "evicted to stay under [tools] max_checkpoint_store_bytes" in kept.reason
    assert w.files() == {"a.txt": b"agent a\n", "b.txt": b"b before\n" * 10}
    assert session_turns(w.log) == []  # the conversation is cut all the same


async def test_a_damaged_checkpoint_is_detected_and_never_restored(tmp_path: Path) -> None:
    w = World(tmp_path)
    (w.ws / "a.txt").write_bytes(b"a before\n")
    await w.turn("one", write("a.txt", "agent a\n"))
    [result] = [r for r in w.log.records if isinstance(r, rec.ToolResult)]
    [checkpoint] = result.checkpoints
    assert checkpoint.before is not None
    w.store.path_of(checkpoint.before).write_bytes(b"a bef0re\n")  # one byte flipped
    done = await w.rewind(1)
    assert done.record.restored == []
    [kept] = done.record.kept
    assert kept.kept_at is None
    assert kept.reason.startswith("not restorable: its kept content ")
    assert "is damaged (its SHA-256 does not match)" in kept.reason
    assert w.files() == {"a.txt": b"agent a\n"}


async def test_a_path_outside_the_roots_is_not_restored(tmp_path: Path) -> None:
    w = World(tmp_path)
    await w.turn("one", write("a.txt", "agent\n"))
    w.path_roots = PathRoots(str(tmp_path / "data"))  # the session now works elsewhere
    done = await w.rewind(1)
    assert [(Path(k.path).name, k.reason) for k in done.record.kept] == [
        ("a.txt", "it is outside the session's workspace roots")
    ]
    assert (w.ws / "a.txt").read_text() == "agent\n"


@pytest.mark.parametrize("seam", ["restore", "record"])
async def test_a_cancelled_rewind_leaves_files_and_log_as_they_were(
    tmp_path: Path, seam: str
) -> None:
    w = World(tmp_path)
    (w.ws / "a.txt").write_text("a before\n")
    await w.turn("one", write("a.txt", "a agent\n"), write("b.txt", "b agent\n"))
    files, records = w.files(), list(w.log.records)
    holder = TurnCancellation()
    seen: list[str] = []

    async def cancel_at(name: str) -> None:
        seen.append(name)
        # "restore": cancelled once the first file is already restored (the second seam).
        if name == seam and (seam == "record" or seen.count("restore") == 2):
            holder.abort(UserCancel())

    with pytest.raises(TurnAborted):
        await w.rewind(1, signal=holder.signal, seam=cancel_at)
    assert w.files() == files
    assert list(w.log.records) == records
    assert [t.number for t in session_turns(w.log)] == [1]
    done = await w.rewind(1)  # and it can be done again, whole
    assert w.files() == {"a.txt": b"a before\n"}
    assert len(done.record.restored) == 2


async def test_old_records_without_checkpoints_still_load() -> None:
    line = (
        b'{"type":"tool/result","turn_id":"t","call_id":"c","status":"completed",'
        b'"output":"ok","at":"2026-12-01T00:00:00.000Z"}'
    )
    record = rec.decode_record(line)
    assert isinstance(record, rec.ToolResult) and record.checkpoints == []
    rewind = rec.Rewind(rewind_id="r", turn_id="t", at=AT)
    assert rec.decode_record(rec.encode_record(rewind)) == rewind


async def test_a_flush_that_fails_after_the_record_still_rewinds_and_says_so(
    tmp_path: Path,
) -> None:
    w = World(tmp_path)
    await w.turn("one", write("a.txt", "agent\n"))

    async def full_disk() -> None:
        raise OSError(28, "No space left on device")

    done = await w.rewind(1, flush=full_disk)
    assert isinstance(done.not_saved, OSError)
    assert w.files() == {}
    assert isinstance(w.log.records[-1], rec.Rewind)


async def test_a_crafted_checkpoint_in_the_journal_reads_nothing_outside_the_store(
    tmp_path: Path,
) -> None:
    """A journal line names the checkpoint by its digest and the file by its path: a record
    crafted to name another file as its checkpoint (an absolute path, `..`), or a path that is
    not resolved, is reported and left; nothing outside the store is read or named."""
    w = World(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("not a checkpoint\n")
    (w.ws / "a.txt").write_text("agent\n")
    (w.ws / "b.txt").write_text("agent\n")
    after = hashlib.sha256(b"agent\n").hexdigest()
    crafted = [
        rec.FileCheckpoint(path=str(w.ws / "a.txt"), before=str(secret), after=after),
        rec.FileCheckpoint(path=str(w.ws / "b.txt"), before="../../secret.txt", after=after),
        rec.FileCheckpoint(path=f"{w.ws}/sub/../b.txt", before=None, after=after),
    ]
    w.log.append(rec.TurnStart(turn_id="turn_x", at=AT))
    w.log.append(
        rec.ToolResult(
            turn_id="turn_x",
            call_id="call_x",
            status="completed",
            output="ok",
            checkpoints=crafted,
            at=AT,
        )
    )
    with anyio.fail_after(10):
        done = await w.rewind(1)
    assert done.record.restored == []
    assert w.files() == {"a.txt": b"agent\n", "b.txt": b"agent\n"}
    kept = [(k.path, k.reason, k.kept_at) for k in done.record.kept]
    assert kept == [
        (str(w.ws / "a.txt"), "its checkpoint's name is not a SHA-256 digest", None),
        (str(w.ws / "b.txt"), "its checkpoint's name is not a SHA-256 digest", None),
        (f"{w.ws}/sub/../b.txt", "it is not a resolved absolute path", None),
    ]
    with pytest.raises(ValueError, match="not a SHA-256 digest"):
        w.store.path_of(str(secret))


@pytest.mark.parametrize("second", ["edited", "created"])
async def test_a_file_edited_between_the_check_and_its_restore_is_not_overwritten(
    tmp_path: Path, second: str
) -> None:
    """The check (the file still holds the agent's write) and the restore are apart: a file
    edited in between is not overwritten (nor a file the agent created, removed); the rewind
    fails whole and the files already restored get the agent's content back."""
    w = World(tmp_path)
    (w.ws / "a.txt").write_text("a before\n")
    if second == "edited":
        (w.ws / "b.txt").write_text("b before\n")
    await w.turn("one", write("a.txt", "a agent\n"), write("b.txt", "b agent\n"))
    seen: list[str] = []

    async def edit_b_meanwhile(name: str) -> None:
        seen.append(name)
        if seen.count("restore") == 2:  # a.txt is restored; b.txt was checked, not yet restored
            (w.ws / "b.txt").write_text("b by hand\n")

    records = list(w.log.records)
    with pytest.raises(RewindFailed, match=r"b\.txt"):
        await w.rewind(1, seam=edit_b_meanwhile)
    assert w.files() == {"a.txt": b"a agent\n", "b.txt": b"b by hand\n"}
    assert list(w.log.records) == records


async def test_a_write_journaled_without_a_checkpoint_is_named_not_restored(
    tmp_path: Path,
) -> None:
    """A journal written before checkpoints were kept (e7ee26c) has `write_file`/`edit_file`
    results without them: a rewind over those turns names the files as not restored instead of
    saying that no file needed restoring."""
    w = World(tmp_path)
    (w.ws / "a.txt").write_text("agent\n")
    w.log.append(rec.TurnStart(turn_id="turn_x", at=AT))
    for call_id, name, arguments, status in [
        ("call_1", "write_file", {"path": "a.txt", "content": "agent\n"}, "completed"),
        ("call_2", "edit_file", {"path": "a.txt", "old_text": "x", "new_text": "y"}, "failed"),
        ("call_3", "edit_file", {"path": "b.txt", "old_text": "x", "new_text": "y"}, "failed"),
    ]:
        call = rec.ToolCallRecord(call_id=call_id, name=name, arguments=arguments)
        w.log.append(
            rec.AssistantMessage(
                turn_id="turn_x", message_id=f"m_{call_id}", parts=[], tool_calls=[call], at=AT
            )
        )
        w.log.append(
            rec.ToolResult(
                turn_id="turn_x",
                call_id=call_id,
                status=status,
                output="ok",
                at=AT,  # type: ignore[arg-type]
            )
        )
    done = await w.rewind(1)
    assert done.record.restored == []
    assert [(k.path, k.reason) for k in done.record.kept] == [
        ("a.txt", "its content before was not kept: this write was journaled without a checkpoint")
    ]
    assert (w.ws / "a.txt").read_text() == "agent\n"
