"""Reading a log through its rewinds (acp_server/session/rewind.py): which records still count
(settings and earlier rewinds stay), the turns `/rewind N` counts, and what a rewind has to
restore: each file's content before its first change and after its last, writes journaled
without a checkpoint, and the commands and subagents it cannot undo. Rewinds on real files:
tests/agent/test_rewind.py."""

from __future__ import annotations

import hashlib
from typing import Any

from acp_server.session import records as rec
from acp_server.session.rewind import (
    NO_CHECKPOINT,
    FileChange,
    changes_since,
    fingerprint,
    retained,
    through_rewinds,
    turns,
)

AT = "2026-12-06T00:00:00.000Z"


def prompt(turn_id: str, text: str) -> rec.UserMessage:
    return rec.UserMessage(
        message_id=f"u-{turn_id}",
        content=[rec.TextPart(text=text)],
        origin="prompt",
        turn_id=turn_id,
        at=AT,
    )


def reply(turn_id: str, *calls: tuple[str, str, dict[str, Any]]) -> rec.AssistantMessage:
    return rec.AssistantMessage(
        turn_id=turn_id,
        message_id=f"a-{turn_id}",
        parts=[rec.TextPart(text=f"reply of {turn_id}")],
        tool_calls=[
            rec.ToolCallRecord(call_id=call_id, name=name, arguments=arguments)
            for call_id, name, arguments in calls
        ],
        at=AT,
    )


def result(
    turn_id: str, call_id: str, *checkpoints: rec.FileCheckpoint, status: str = "completed"
) -> rec.ToolResult:
    return rec.ToolResult(
        turn_id=turn_id,
        call_id=call_id,
        status=status,  # type: ignore[arg-type]
        output="done",
        checkpoints=list(checkpoints),
        at=AT,
    )


def turn(turn_id: str, *middle: rec.Record) -> list[rec.Record]:
    return [
        rec.TurnStart(turn_id=turn_id, at=AT),
        prompt(turn_id, f"prompt of {turn_id}"),
        *middle,
        rec.TurnEndRecord(turn_id=turn_id, outcome=rec.Completed(), at=AT),
    ]


def rewind_to(turn_id: str) -> rec.Rewind:
    return rec.Rewind(rewind_id=f"r-{turn_id}", turn_id=turn_id, at=AT)


def test_a_rewind_drops_its_turn_and_what_followed_but_keeps_settings_and_itself() -> None:
    mode = rec.ModeChange(mode="read_only", at=AT)
    log = [*turn("t1", reply("t1")), *turn("t2", mode, reply("t2")), *turn("t3"), rewind_to("t2")]
    kept = retained(log)
    assert kept == [*turn("t1", reply("t1")), mode, rewind_to("t2")]


def test_a_later_turn_counts_again_and_a_rewind_to_an_unknown_turn_cuts_nothing() -> None:
    log = [*turn("t1"), *turn("t2"), rewind_to("t2"), *turn("t3"), rewind_to("t9")]
    assert retained(log) == [*turn("t1"), rewind_to("t2"), *turn("t3"), rewind_to("t9")]


def test_a_rewind_to_a_turn_already_rewound_past_cuts_nothing_more() -> None:
    log = [*turn("t1"), *turn("t2"), rewind_to("t1"), rewind_to("t2")]
    assert retained(log) == [rewind_to("t1"), rewind_to("t2")]


def test_turns_are_numbered_from_one_with_their_prompt_and_the_reply_before_them() -> None:
    log = [*turn("t1", reply("t1")), *turn("t2"), rec.TurnStart(turn_id="t3", at=AT)]
    found = turns(log)
    assert [(t.number, t.turn_id) for t in found] == [(1, "t1"), (2, "t2"), (3, "t3")]
    assert found[0].prompt == prompt("t1", "prompt of t1") and found[0].last_reply is None
    assert found[1].last_reply == reply("t1")
    assert found[2].prompt is None  # opened without a prompt of its own


def test_each_rewind_keeps_the_number_its_turn_had_when_it_was_made() -> None:
    # The second rewind cuts before the turns the first counted: the retained records alone
    # would number t4 as turn 2; the notice said turn 4.
    log = [*turn("t1"), *turn("t2"), *turn("t3"), *turn("t4"), rewind_to("t4")]
    log += [*turn("t5"), rewind_to("t2"), *turn("t6"), rewind_to("t6"), rewind_to("t9")]
    read = through_rewinds(log)
    assert read.records == retained(log)
    assert read.numbers == {"r-t4": 4, "r-t2": 2, "r-t6": 2}  # t9 is no turn: no number
    assert [t.number for t in turns(retained(log[: log.index(rewind_to("t6"))]))] == [1, 2]


def test_a_message_is_fingerprinted_by_the_sha256_of_its_text() -> None:
    assert fingerprint("héllo") == "sha256:" + hashlib.sha256("héllo".encode()).hexdigest()


def test_changes_keep_each_files_first_before_and_last_after_from_the_turn_on() -> None:
    a1 = rec.FileCheckpoint(path="/w/a.py", before="sha-a0", after="sha-a1")
    a2 = rec.FileCheckpoint(path="/w/a.py", before="sha-a1", after="sha-a2")
    new = rec.FileCheckpoint(path="/w/new.py", after="sha-n1")
    early = rec.FileCheckpoint(path="/w/early.py", before="sha-e0", after="sha-e1")
    log = [
        *turn(
            "t1",
            reply("t1", ("c0", "write_file", {"path": "/w/early.py"})),
            result("t1", "c0", early),
        ),
        *turn(
            "t2",
            reply(
                "t2", ("c1", "edit_file", {"path": "/w/a.py"}), ("c2", "bash", {"command": "make"})
            ),
            result("t2", "c1", a1),
            result("t2", "c2"),
        ),
        *turn(
            "t3",
            reply(
                "t3",
                ("c3", "write_file", {"path": "/w/a.py"}),
                ("c4", "write_file", {"path": "/w/new.py"}),
            ),
            result("t3", "c3", a2),
            result("t3", "c4", new),
            reply("t3", ("c5", "task", {"description": "refactor", "prompt": "..."})),
            result("t3", "c5"),
        ),
    ]
    changes = changes_since(log, "t2")
    assert changes.files == [
        FileChange("/w/a.py", "sha-a0", "sha-a2", None, ["c1", "c3"]),
        FileChange("/w/new.py", None, "sha-n1", None, ["c4"]),
    ]
    assert (changes.commands, changes.tasks) == (["make"], ["refactor"])


def test_a_completed_write_without_a_checkpoint_is_a_change_that_cannot_be_restored() -> None:
    log = turn(
        "t1",
        reply(
            "t1",
            ("c1", "write_file", {"path": "/w/old.py"}),
            ("c2", "edit_file", {"path": "/w/x.py"}),
        ),
        result("t1", "c1"),
        result("t1", "c2", status="failed"),
    )
    assert changes_since(log, "t1").files == [
        FileChange("/w/old.py", None, "", NO_CHECKPOINT, ["c1"])
    ]
