"""The recorder builds every record, stamps it with the clock and appends it to the log."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from acp_server.session import records as rec
from acp_server.session.journal import JOURNAL_VERSION, JournalHeader
from acp_server.session.log import SessionLog
from acp_server.session.recorder import Recorder, new_header

AT = "2026-12-02T01:02:03.004Z"


@dataclass(frozen=True)
class Diff:
    path: str
    old_text: str | None
    new_text: str


@dataclass(frozen=True)
class Location:
    path: str
    line: int | None = None


@dataclass(frozen=True)
class Item:
    content: str
    priority: typing.Literal["high", "medium", "low"] = "medium"
    status: typing.Literal["pending", "in_progress", "completed"] = "pending"


@dataclass(frozen=True)
class Image:
    data: str
    mime_type: str


@dataclass(frozen=True)
class Kept:
    path: str
    reason: str
    kept_at: str | None = None


@dataclass(frozen=True)
class Output:
    """What a tool returned, as the runtime's `ToolOutput` holds it."""

    text: str
    failed: bool = False
    diffs: tuple[Diff, ...] = ()
    locations: tuple[Location, ...] = ()
    checkpoints: tuple[rec.FileCheckpoint, ...] = ()
    images: tuple[Image, ...] = ()


@dataclass(frozen=True)
class Shown:
    """A tool call as the client was shown it, as the runtime's announcement holds it."""

    turn_id: str
    call_id: str
    title: str
    kind: str
    locations: tuple[Location, ...] = ()


@dataclass(frozen=True)
class Call:
    call_id: str
    name: str
    arguments: dict[str, object]


def every_kind(recorder: Recorder) -> list[rec.Record]:
    """One record of each kind, through the recorder's own words."""
    text = [rec.TextPart(text="hi")]
    return [
        recorder.turn_started("t1"),
        recorder.user_message("m1", list(text), "prompt", "t1"),
        recorder.step_started("t1", 1),
        recorder.assistant_message(
            "t1",
            "m2",
            [rec.ThoughtPart(text="hmm"), rec.TextPart(text="ok")],
            [Call("c1", "bash", {"command": "ls"}), Call("c2", "read_file", {"path": "a"})],
            from_text={"c2"},
        ),
        recorder.tool_result(
            Shown("t1", "c1", "ls", "execute", (Location("b"),)),
            Output(
                "a\nb",
                diffs=(Diff("a", None, "x"),),
                locations=(Location("a", 3),),
                checkpoints=(rec.FileCheckpoint(path="/w/a", after="ab12"),),
                images=(Image("aGk=", "image/png"),),
            ),
        ),
        recorder.synthetic_result("t1", "c2", "not_run", "not run"),
        recorder.plan("t1", [Item("write tests", "high", "in_progress")]),
        recorder.step_ended("t1", 1, "tool_calls"),
        recorder.compaction(
            "cmp1", "m2", summary="sum", turn_id="t1", tokens_before=900, tokens_after=100
        ),
        recorder.turn_ended("t1", rec.Completed()),
        recorder.mode_changed("read_only"),
        recorder.model_changed("echo"),
        recorder.permission_rule("edit", allow=True, scope="edit", workspace=["/w"]),
        recorder.system_prompt("append", "be brief"),
        recorder.user_message("m3", list(text), "context"),
        recorder.rewound(
            "rw1",
            "t1",
            restored=["/w/a"],
            kept=[Kept("/w/b", "edited since")],
            commands=["ls"],
            tasks=["explore"],
        ),
        recorder.background_started("bg_1", "python -m http.server", "c1"),
        recorder.background_ended("bg_1", "exited", exit_code=0),
    ]


def test_the_recorder_builds_each_kind_of_record_and_stamps_it() -> None:
    log = SessionLog("s")
    recorder = Recorder(log.append, clock=lambda: AT)
    made = every_kind(recorder)
    assert list(log.records) == made  # appended, in order, and returned
    assert {type(r) for r in made} == set(typing.get_args(rec.Record))
    assert all(r.at == AT for r in made)
    for record in made:  # what it builds is what the journal reads back
        assert rec.decode_record(rec.encode_record(record)) == record


def test_the_recorded_fields_are_the_ones_given() -> None:
    made: list[rec.Record] = []
    every_kind(Recorder(made.append, clock=lambda: AT))
    answer, result, failed, plan, rule = made[3], made[4], made[5], made[6], made[12]
    assert answer == rec.AssistantMessage(
        turn_id="t1",
        message_id="m2",
        parts=[rec.ThoughtPart(text="hmm"), rec.TextPart(text="ok")],
        tool_calls=[
            rec.ToolCallRecord(call_id="c1", name="bash", arguments={"command": "ls"}),
            rec.ToolCallRecord(
                call_id="c2", name="read_file", arguments={"path": "a"}, from_text=True
            ),
        ],
        at=AT,
    )
    assert result == rec.ToolResult(
        turn_id="t1",
        call_id="c1",
        status="completed",
        output="a\nb",
        title="ls",
        kind="execute",
        diffs=[rec.DiffRecord(path="a", old_text=None, new_text="x")],
        locations=[rec.LocationRecord(path="a", line=3)],
        checkpoints=[rec.FileCheckpoint(path="/w/a", after="ab12")],
        images=[rec.ImagePart(data="aGk=", mime_type="image/png")],
        at=AT,
    )
    assert failed == rec.ToolResult(
        turn_id="t1",
        call_id="c2",
        status="failed",
        output="not run",
        synthetic="not_run",
        at=AT,
    )
    assert plan == rec.PlanRecord(
        turn_id="t1",
        entries=[rec.PlanEntryRecord(content="write tests", priority="high", status="in_progress")],
        at=AT,
    )
    assert rule == rec.PermissionRule(
        tool_kind="edit", decision="allow", scope="edit", workspace=["/w"], at=AT
    )
    idle = made[-4]
    assert isinstance(idle, rec.UserMessage) and idle.turn_id is None
    assert made[-2:] == [
        rec.BackgroundStart(item="bg_1", call_id="c1", command="python -m http.server", at=AT),
        rec.BackgroundEnd(item="bg_1", how="exited", exit_code=0, at=AT),
    ]
    assert made[-3] == rec.Rewind(
        rewind_id="rw1",
        turn_id="t1",
        restored=["/w/a"],
        kept=[rec.RewindKept(path="/w/b", reason="edited since")],
        commands=["ls"],
        tasks=["explore"],
        at=AT,
    )


def test_a_result_keeps_the_announced_locations_when_the_tool_returns_none() -> None:
    made: list[rec.Record] = []
    recorder = Recorder(made.append, clock=lambda: AT)
    shown = Shown("t1", "c1", "read a", "read", (Location("a"),))
    result = recorder.tool_result(shown, Output("gone", failed=True), "not_run")
    assert (result.status, result.synthetic, result.title, result.kind) == (
        "failed",
        "not_run",
        "read a",
        "read",
    )
    assert result.locations == [rec.LocationRecord(path="a")]
    assert recorder.tool_result(shown, Output("x", locations=(Location("b", 2),))).locations == [
        rec.LocationRecord(path="b", line=2)
    ]


def test_the_log_s_recorder_appends_to_the_log_and_its_listeners() -> None:
    log = SessionLog("s")
    heard: list[rec.Record] = []
    log.on_append(heard.append)
    record = log.recorder.mode_changed("default")
    assert heard == [record] and list(log.records) == [record]


def test_the_default_clock_is_the_process_clock() -> None:
    rec.set_clock(lambda: 1_700_000_000_123)
    try:
        made: list[rec.Record] = []
        record = Recorder(made.append).turn_started("t")
        header = new_header("s", "/w", ["/x"], forked_from="o", forked_at_turn="t0")
    finally:
        rec.set_clock(None)
    assert record.at == "2023-11-14T22:13:20.123Z"
    assert header == JournalHeader(
        session_id="s",
        cwd="/w",
        created_at="2023-11-14T22:13:20.123Z",
        additional_directories=["/x"],
        forked_from="o",
        forked_at_turn="t0",
        version=JOURNAL_VERSION,
    )
