"""The session journal: one write per record, fsync points, one writer, strict and forgiving
loading, crash repair, listing and deletion."""

from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from acp_server.session import journal_fs
from acp_server.session.journal import (
    JOURNAL_VERSION,
    Journal,
    JournalCorrupt,
    JournalExists,
    JournalHeader,
    JournalLocked,
    JournalNotFound,
    JournalStore,
    JournalVersionError,
)
from acp_server.session.records import (
    Aborted,
    AssistantMessage,
    Completed,
    DisposedOutcome,
    ErrorOutcome,
    ImagePart,
    InterruptedOutcome,
    MaxTokens,
    MaxTurnRequests,
    Outcome,
    Record,
    Refusal,
    ResourceLinkPart,
    ResourcePart,
    StepEnd,
    StepStart,
    TextPart,
    ThoughtPart,
    ToolCallRecord,
    ToolResult,
    TurnEndRecord,
    TurnStart,
    UserMessage,
    encode_record,
)
from acp_server.session.repair import OUTCOME_UNKNOWN_OUTPUT

AT = "2026-11-30T04:05:06.123Z"
REPO = Path(__file__).resolve().parents[2]


def header(
    session_id: str = "s1",
    *,
    additional_directories: list[str] | None = None,
    parent_session_id: str | None = None,
    parent_tool_call_id: str | None = None,
) -> JournalHeader:
    return JournalHeader(
        session_id=session_id,
        cwd="/work/project",
        created_at=AT,
        additional_directories=additional_directories or [],
        parent_session_id=parent_session_id,
        parent_tool_call_id=parent_tool_call_id,
    )


def prompt(text: str, turn_id: str = "t1", at: str = AT) -> UserMessage:
    return UserMessage(
        message_id=f"m-{turn_id}",
        content=[TextPart(text=text)],
        origin="prompt",
        turn_id=turn_id,
        at=at,
    )


def complete_turn(turn_id: str, text: str = "hi", at: str = AT) -> list[Record]:
    return [
        TurnStart(turn_id=turn_id, at=at),
        prompt(text, turn_id, at),
        StepStart(turn_id=turn_id, step=1, at=at),
        AssistantMessage(
            turn_id=turn_id, message_id=f"a-{turn_id}", parts=[TextPart(text="ok")], at=at
        ),
        StepEnd(turn_id=turn_id, step=1, finish="stop", at=at),
        TurnEndRecord(turn_id=turn_id, outcome=Completed(), at=at),
    ]


OTHER_OUTCOMES: list[Outcome] = [
    Aborted(),
    ErrorOutcome(message="boom", code="429"),
    DisposedOutcome(),
    MaxTokens(),
    MaxTurnRequests(),
    Refusal(),
    InterruptedOutcome(),
]

# Every record type, every content part and every outcome, in balanced turns.
EVERY_RECORD: list[Record] = [
    UserMessage(message_id="m0", content=[TextPart(text="fyi")], origin="context", at=AT),
    TurnStart(turn_id="t1", at=AT),
    UserMessage(
        message_id="m1",
        content=[
            TextPart(text="hello"),
            ImagePart(data="aGk=", mime_type="image/png", uri="file:///a.png"),
            ResourcePart(uri="file:///a.txt", text="contents", mime_type="text/plain"),
            ResourcePart(uri="file:///b.bin", blob="AAE="),
            ResourceLinkPart(uri="file:///c", name="c", title="C", size=3),
        ],
        origin="prompt",
        turn_id="t1",
        at=AT,
    ),
    UserMessage(
        message_id="m2", content=[TextPart(text="stop")], origin="steering", turn_id="t1", at=AT
    ),
    StepStart(turn_id="t1", step=1, at=AT),
    AssistantMessage(
        turn_id="t1",
        message_id="a1",
        parts=[ThoughtPart(text="hmm"), TextPart(text="reading\nnewlines stay escaped")],
        tool_calls=[
            ToolCallRecord(call_id="c1", name="read_file", arguments={"path": "a.txt"}),
            ToolCallRecord(call_id="c2", name="bash", arguments={"command": "ls", "n": [1, None]}),
            ToolCallRecord(call_id="c3", name="bash", arguments={}),
        ],
        at=AT,
    ),
    ToolResult(
        turn_id="t1",
        call_id="c1",
        status="completed",
        output="contents",
        title="Read a.txt",
        kind="read",
        at=AT,
    ),
    ToolResult(turn_id="t1", call_id="c2", status="failed", output="denied", at=AT),
    ToolResult(
        turn_id="t1", call_id="c3", status="failed", output="not run", synthetic="not_run", at=AT
    ),
    StepEnd(turn_id="t1", step=1, finish="tool_calls", at=AT),
    TurnEndRecord(turn_id="t1", outcome=Completed(), at=AT),
    *(
        record
        for index, outcome in enumerate(OTHER_OUTCOMES)
        for record in (
            TurnStart(turn_id=f"o{index}", at=AT),
            TurnEndRecord(turn_id=f"o{index}", outcome=outcome, at=AT),
        )
    ),
]


@pytest.fixture
def store(tmp_path: Path) -> JournalStore:
    return JournalStore(tmp_path / "data")


def write_session(store: JournalStore, records: list[Record], session_id: str = "s1") -> Path:
    with store.create(header(session_id)) as journal:
        for record in records:
            journal.append(record)
    return store.path_for(session_id)


def append_raw(path: Path, data: bytes) -> None:
    with open(path, "ab") as file:
        file.write(data)


# --- creating and round trips -----------------------------------------------------------------


def test_created_journal_starts_with_the_header_line(store: JournalStore) -> None:
    path = write_session(store, [TurnStart(turn_id="t1", at=AT)])
    assert path == store.root / "sessions" / "s1.jsonl"
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[0]) == {
        "format": "acp-server-session",
        "version": 1,
        "session_id": "s1",
        "cwd": "/work/project",
        "created_at": AT,
        "additional_directories": [],
        "parent_session_id": None,
        "parent_tool_call_id": None,
        "forked_from": None,
        "forked_at_turn": None,
    }
    assert lines[1:] == [encode_record(TurnStart(turn_id="t1", at=AT)), b""]
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(store.sessions_dir)) == ["s1.jsonl"]  # no temporary file left


def test_header_fields_survive_open(store: JournalStore) -> None:
    created = header(
        "sub-1",
        additional_directories=["/a", "/b"],
        parent_session_id="s1",
        parent_tool_call_id="call-7",
    )
    store.create(created).close()
    loaded = store.open("sub-1")
    assert loaded.header == created
    assert loaded.header.version == JOURNAL_VERSION
    assert loaded.records == []
    loaded.journal.close()


def test_every_record_type_survives_create_append_open(store: JournalStore) -> None:
    write_session(store, EVERY_RECORD)
    loaded = store.open("s1")
    try:
        assert loaded.records == EVERY_RECORD
        assert [type(r) for r in loaded.records] == [type(r) for r in EVERY_RECORD]
        assert not loaded.repaired
        assert loaded.truncated_bytes == 0
    finally:
        loaded.journal.close()


def test_tool_result_title_and_kind_are_left_out_when_unset() -> None:
    bare = json.loads(
        encode_record(ToolResult(turn_id="t", call_id="c", status="completed", output="", at=AT))
    )
    assert "title" not in bare and "kind" not in bare
    shown = json.loads(
        encode_record(
            ToolResult(
                turn_id="t",
                call_id="c",
                status="completed",
                output="",
                title="Edit a.py",
                kind="edit",
                at=AT,
            )
        )
    )
    assert (shown["title"], shown["kind"]) == ("Edit a.py", "edit")


def test_appends_after_open_are_kept(store: JournalStore) -> None:
    write_session(store, complete_turn("t1"))
    loaded = store.open("s1")
    loaded.journal.append(TurnStart(turn_id="t2", at=AT))
    loaded.journal.append(TurnEndRecord(turn_id="t2", outcome=Aborted(), at=AT))
    loaded.journal.close()
    again = store.open("s1")
    assert again.records == [
        *complete_turn("t1"),
        TurnStart(turn_id="t2", at=AT),
        TurnEndRecord(turn_id="t2", outcome=Aborted(), at=AT),
    ]
    again.journal.close()


def test_create_refuses_an_existing_session(store: JournalStore) -> None:
    write_session(store, [])
    with pytest.raises(JournalExists, match="s1"):
        store.create(header("s1"))
    assert sorted(os.listdir(store.sessions_dir)) == ["s1.jsonl"]


def test_create_works_without_hard_links(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_link(src: object, dst: object) -> None:
        raise PermissionError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(os, "link", no_link)
    journal = store.create(header("s1"))
    journal.append(TurnStart(turn_id="t1", at=AT))
    with pytest.raises(JournalLocked):
        JournalStore(store.root).open("s1")
    journal.close()
    assert sorted(os.listdir(store.sessions_dir)) == ["s1.jsonl"]
    loaded = store.open("s1")
    assert loaded.header == header("s1")
    assert loaded.repaired  # the open turn t1 was closed
    loaded.journal.close()
    with pytest.raises(JournalExists):
        store.create(header("s1"))


# --- writes and fsync -------------------------------------------------------------------------


def test_each_append_is_a_single_write_of_one_line(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = store.create(header("s1"))
    writes: list[bytes] = []
    real_write = os.write

    def counting_write(fd: int, data: bytes) -> int:
        writes.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", counting_write)
    for record in complete_turn("t1"):
        journal.append(record)
    monkeypatch.undo()
    journal.close()
    assert writes == [encode_record(record) + b"\n" for record in complete_turn("t1")]


def test_sync_and_close_fsync_the_journal(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = store.create(header("s1"))
    fd = journal._fd
    synced: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(journal_fs, "F_FULLFSYNC", None)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    journal.append(TurnStart(turn_id="t1", at=AT))
    assert synced == []  # appends alone do not fsync
    journal.sync()
    assert synced == [fd]
    journal.close()
    assert synced == [fd, fd]
    journal.close()  # idempotent: no second fsync, no error
    journal.sync()
    assert synced == [fd, fd]
    assert journal.closed


@pytest.mark.anyio
async def test_flush_fsyncs_in_a_worker_thread(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = store.create(header("s1"))
    threads: list[threading.Thread] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        threads.append(threading.current_thread())
        real_fsync(fd)

    monkeypatch.setattr(journal_fs, "F_FULLFSYNC", None)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    journal.append(TurnStart(turn_id="t1", at=AT))
    await journal.flush()
    assert len(threads) == 1
    assert threads[0] is not threading.current_thread()
    journal.close()
    await journal.flush()  # a no-op once closed
    assert len(threads) == 2


# --- one writer -------------------------------------------------------------------------------


def test_a_second_open_in_the_same_process_is_refused(store: JournalStore) -> None:
    journal = store.create(header("s1"))
    with pytest.raises(JournalLocked, match="session s1 is already open for writing"):
        store.open("s1")
    # Another store on the same directory in this process: the file lock refuses it.
    with pytest.raises(JournalLocked, match="session s1 is already open for writing"):
        JournalStore(store.root).open("s1")
    journal.close()
    loaded = store.open("s1")
    with pytest.raises(JournalLocked):
        store.open("s1")
    loaded.journal.close()
    store.open("s1").journal.close()


OPEN_IN_CHILD = textwrap.dedent(
    """
    import sys
    from acp_server.session.journal import JournalLocked, JournalStore
    try:
        loaded = JournalStore(sys.argv[1]).open(sys.argv[2])
    except JournalLocked as exc:
        print(exc)
        sys.exit(3)
    loaded.journal.close()
    print("opened", len(loaded.records))
    """
)


def test_open_from_another_process_is_refused_while_locked(store: JournalStore) -> None:
    journal = store.create(header("s1"))
    journal.append(TurnStart(turn_id="t1", at=AT))
    journal.append(TurnEndRecord(turn_id="t1", outcome=Completed(), at=AT))
    command = [sys.executable, "-c", OPEN_IN_CHILD, str(store.root), "s1"]
    child = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert child.returncode == 3, child.stderr
    assert child.stdout.strip() == (
        "session s1 is already open for writing by another acp-server process "
        f"({store.path_for('s1')})"
    )
    journal.close()
    child = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "opened 2"


# --- strict and forgiving loading -------------------------------------------------------------


def test_a_torn_last_line_is_truncated_with_a_warning(
    store: JournalStore, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_session(store, complete_turn("t1"))
    size = path.stat().st_size
    torn = encode_record(TurnStart(turn_id="t2", at=AT))[:17]
    append_raw(path, torn)
    with caplog.at_level(logging.WARNING, logger="acp_server.session.journal"):
        loaded = store.open("s1")
    assert loaded.records == complete_turn("t1")
    assert loaded.truncated_bytes == len(torn) == 17
    assert not loaded.repaired
    assert path.stat().st_size == size
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert str(path) in warning.getMessage()
    assert "17 bytes" in warning.getMessage()
    loaded.journal.append(TurnStart(turn_id="t2", at=AT))
    loaded.journal.append(TurnEndRecord(turn_id="t2", outcome=Completed(), at=AT))
    loaded.journal.close()
    again = store.open("s1")
    assert again.records[-2:] == [
        TurnStart(turn_id="t2", at=AT),
        TurnEndRecord(turn_id="t2", outcome=Completed(), at=AT),
    ]
    again.journal.close()


def test_a_complete_record_missing_only_its_newline_is_kept(store: JournalStore) -> None:
    path = write_session(store, [])
    append_raw(path, encode_record(TurnStart(turn_id="t1", at=AT)))
    loaded = store.open("s1")
    assert loaded.truncated_bytes == 0
    assert loaded.records[0] == TurnStart(turn_id="t1", at=AT)
    loaded.journal.close()
    assert store.open("s1").records[:1] == [TurnStart(turn_id="t1", at=AT)]


def test_a_complete_but_invalid_last_line_is_a_strict_error(store: JournalStore) -> None:
    path = write_session(store, complete_turn("t1"))
    append_raw(path, b'{"type":"turn/start","at":"x"}\n')
    before = path.read_bytes()
    with pytest.raises(JournalCorrupt) as failed:
        store.open("s1")
    error = failed.value
    assert (error.path, error.record, error.line) == (path, 7, 8)
    assert str(error).startswith(f"{path}: record 7 (line 8): ")
    assert "turn_id" in str(error)
    assert path.read_bytes() == before  # nothing truncated or repaired
    with pytest.raises(JournalCorrupt):  # not JournalLocked: the failed load let go
        store.open("s1")


def test_damage_before_the_last_line_is_a_strict_error(store: JournalStore) -> None:
    path = write_session(store, complete_turn("t1"))
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3][:10]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalCorrupt, match=r"record 3 \(line 4\)") as failed:
        store.open("s1")
    assert str(path) in str(failed.value)


def test_the_legacy_reason_bearing_aborted_outcome_fails_the_load(store: JournalStore) -> None:
    path = write_session(store, [TurnStart(turn_id="t1", at=AT), prompt("go")])
    append_raw(
        path,
        b'{"type":"turn/end","turn_id":"t1","outcome":{"kind":"aborted","reason":"user"},'
        b'"at":"2026-11-30T04:05:06.123Z"}\n',
    )
    with pytest.raises(JournalCorrupt) as failed:
        store.open("s1")
    assert failed.value.record == 3
    assert str(failed.value).startswith(f"{path}: record 3 (line 4): ")
    assert "reason" in str(failed.value)


def test_the_coarse_aborted_outcome_loads(store: JournalStore) -> None:
    path = write_session(store, [TurnStart(turn_id="t1", at=AT), prompt("go")])
    append_raw(
        path,
        b'{"type":"turn/end","turn_id":"t1","outcome":{"kind":"aborted"},'
        b'"at":"2026-11-30T04:05:06.123Z"}\n',
    )
    loaded = store.open("s1")
    assert loaded.records[-1] == TurnEndRecord(turn_id="t1", outcome=Aborted(), at=AT)
    assert not loaded.repaired
    loaded.journal.close()


def test_an_unknown_record_type_fails_the_load(store: JournalStore) -> None:
    path = write_session(store, complete_turn("t1"))
    append_raw(path, b'{"type":"turn/paused","turn_id":"t1","at":"x"}\n')
    append_raw(path, encode_record(TurnStart(turn_id="t2", at=AT)) + b"\n")
    with pytest.raises(JournalCorrupt, match=r"record 7 \(line 8\).*turn/paused"):
        store.open("s1")


@pytest.mark.parametrize(
    ("first_line", "error", "message"),
    [
        (b"", JournalCorrupt, "header"),
        (b'{"type":"journal/header","format":1}', JournalCorrupt, "not an acp-server session"),
        (b'{"format":"other","version":1}', JournalCorrupt, "unknown journal format"),
        (
            b'{"format":"acp-server-session","version":2,"session_id":"s1"}',
            JournalVersionError,
            "version 2 is newer",
        ),
        (
            b'{"format":"acp-server-session","version":1,"session_id":"other","cwd":"/",'
            b'"created_at":"x"}',
            JournalCorrupt,
            "names session 'other'",
        ),
        (b'{"format":"acp-server-session","version":1}', JournalCorrupt, "session_id"),
    ],
)
def test_a_bad_header_fails_the_load(
    store: JournalStore, first_line: bytes, error: type[JournalCorrupt], message: str
) -> None:
    store.sessions_dir.mkdir(parents=True)
    path = store.path_for("s1")
    path.write_bytes(first_line + b"\n" + encode_record(TurnStart(turn_id="t1", at=AT)) + b"\n")
    with pytest.raises(error, match=message) as failed:
        store.open("s1")
    assert failed.value.record == 0 and failed.value.line == 1
    assert str(failed.value).startswith(f"{path}: header (line 1): ")


def test_an_empty_or_headerless_file_fails_the_load(store: JournalStore) -> None:
    store.sessions_dir.mkdir(parents=True)
    path = store.path_for("s1")
    path.write_bytes(b"")
    with pytest.raises(JournalCorrupt, match="empty"):
        store.open("s1")
    path.write_bytes(b'{"format":"acp-server-ses')
    with pytest.raises(JournalCorrupt, match="header line is incomplete"):
        store.open("s1")
    assert path.read_bytes() == b'{"format":"acp-server-ses'  # a torn header is not truncated


def test_opening_an_unknown_session_is_not_found(store: JournalStore) -> None:
    with pytest.raises(JournalNotFound, match="nope"):
        store.open("nope")


# --- crash repair -----------------------------------------------------------------------------


def test_an_open_turn_is_closed_once_with_outcome_unknown_results(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashed: list[Record] = [
        *complete_turn("t0"),
        TurnStart(turn_id="t1", at=AT),
        prompt("edit things"),
        StepStart(turn_id="t1", step=1, at=AT),
        AssistantMessage(
            turn_id="t1",
            message_id="a1",
            parts=[TextPart(text="on it")],
            tool_calls=[
                ToolCallRecord(call_id="c1", name="read_file", arguments={}),
                ToolCallRecord(call_id="c2", name="edit_file", arguments={}),
                ToolCallRecord(call_id="c3", name="bash", arguments={}),
            ],
            at=AT,
        ),
        ToolResult(turn_id="t1", call_id="c1", status="completed", output="text", at=AT),
    ]
    path = write_session(store, crashed)
    append_raw(path, b'{"type":"tool/result","turn_id":"t1","call_id":"c2","sta')  # torn
    synced: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(journal_fs, "F_FULLFSYNC", None)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    loaded = store.open("s1")
    assert loaded.repaired
    assert loaded.truncated_bytes > 0
    repairs = loaded.records[len(crashed) :]
    assert len(repairs) == 3
    for call_id, result in zip(["c2", "c3"], repairs[:2], strict=True):
        assert isinstance(result, ToolResult)
        assert (result.turn_id, result.call_id, result.status, result.synthetic) == (
            "t1",
            call_id,
            "failed",
            "outcome_unknown",
        )
        assert result.output == OUTCOME_UNKNOWN_OUTPUT
        assert result.output.startswith("outcome unknown")
    end = repairs[2]
    assert isinstance(end, TurnEndRecord)
    assert (end.turn_id, end.outcome) == ("t1", InterruptedOutcome())
    fsyncs_after_load = len(synced)
    assert fsyncs_after_load >= 2  # the truncation, then the repair
    loaded.journal.close()

    again = store.open("s1")
    assert not again.repaired
    assert again.truncated_bytes == 0
    assert again.records == loaded.records
    again.journal.close()
    on_disk = path.read_bytes().split(b"\n")
    assert on_disk[-1] == b""
    assert on_disk[-4:-1] == [encode_record(record) for record in repairs]


def test_background_items_left_running_end_once_with_an_unknown_outcome(
    store: JournalStore,
) -> None:
    # Between turns, with no turn open: an item the dead process started and never ended is
    # ended by repair; one that ended is left as it is.
    from acp_server.session.records import BackgroundEnd, BackgroundStart

    crashed: list[Record] = [
        *complete_turn("t0"),
        BackgroundStart(item="bg_1", call_id="c1", command="python -m http.server", at=AT),
        BackgroundStart(item="bg_2", call_id="c2", command="make", at=AT),
        BackgroundEnd(item="bg_2", how="exited", exit_code=0, at=AT),
    ]
    write_session(store, crashed)
    loaded = store.open("s1")
    assert loaded.repaired
    assert [r for r in loaded.records[len(crashed) :]] == [
        BackgroundEnd(item="bg_1", how="unknown", at=loaded.records[-1].at)
    ]
    loaded.journal.close()
    again = store.open("s1")
    assert not again.repaired and again.records == loaded.records
    again.journal.close()


def test_an_open_turn_without_tool_calls_just_ends_interrupted(store: JournalStore) -> None:
    write_session(store, [TurnStart(turn_id="t1", at=AT), prompt("hi")])
    loaded = store.open("s1")
    assert loaded.repaired
    [end] = loaded.records[2:]
    assert isinstance(end, TurnEndRecord) and end.outcome == InterruptedOutcome()
    loaded.journal.close()


# --- listing ----------------------------------------------------------------------------------


def test_list_summarizes_sessions_cheaply_and_skips_unreadable_ones(
    store: JournalStore, caplog: pytest.LogCaptureFixture
) -> None:
    assert store.list() == []  # no data directory yet
    late = "2026-12-01T10:00:00.000Z"
    write_session(
        store,
        [
            UserMessage(message_id="m0", content=[TextPart(text="ctx")], origin="context", at=AT),
            TurnStart(turn_id="t1", at=AT),
            UserMessage(
                message_id="m1",
                content=[
                    TextPart(text="fix the "),
                    ResourceLinkPart(uri="file:///a.py", name="a.py"),
                    TextPart(text="bug"),
                ],
                origin="prompt",
                turn_id="t1",
                at=AT,
            ),
            *complete_turn("t2", "second prompt", at=late),
        ],
        session_id="busy",
    )
    append_raw(store.path_for("busy"), b'{"type":"turn/start","turn_id":"t3","at":"2027-')
    store.create(header("empty", additional_directories=["/x"])).close()
    # A last record longer than the tail window still gives its timestamp.
    big = "2026-12-02T00:00:00.000Z"
    write_session(store, [*complete_turn("t1", "x" * 200_000, at=big)], session_id="big")
    (store.sessions_dir / "broken.jsonl").write_bytes(b'{"format":"nope"}\n')
    (store.sessions_dir / "torn-header.jsonl").write_bytes(b'{"format":"acp-')
    (store.sessions_dir / "notes.txt").write_text("not a journal")
    (store.sessions_dir / ".hidden.jsonl").write_text("ignored: not a session id")

    with caplog.at_level(logging.WARNING, logger="acp_server.session.journal"):
        summaries = store.list()

    by_id = {summary.session_id: summary for summary in summaries}
    assert [summary.session_id for summary in summaries] == ["big", "busy", "empty"]
    busy = by_id["busy"]
    assert busy.first_prompt_text == "fix the bug"
    assert busy.updated_at == late  # the torn line is not a record
    assert busy.created_at == AT
    assert busy.cwd == "/work/project"
    assert busy.path == store.path_for("busy")
    empty = by_id["empty"]
    assert empty.first_prompt_text is None
    assert empty.updated_at == empty.created_at == AT
    assert empty.additional_directories == ["/x"]
    assert by_id["big"].updated_at == big
    assert by_id["big"].first_prompt_text == "x" * 200_000
    skipped = sorted(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert len(skipped) == 2
    assert "broken.jsonl" in skipped[0] and "torn-header.jsonl" in skipped[1]


# --- deleting and session ids -----------------------------------------------------------------


def test_delete_is_idempotent_and_refused_while_open(store: JournalStore) -> None:
    assert store.delete("s1") is False
    journal = store.create(header("s1"))
    with pytest.raises(JournalLocked):
        store.delete("s1")
    with pytest.raises(JournalLocked):  # another store: the file lock refuses
        JournalStore(store.root).delete("s1")
    assert store.exists("s1")
    journal.close()
    assert store.delete("s1") is True
    assert not store.exists("s1")
    assert store.delete("s1") is False
    with pytest.raises(JournalNotFound):
        store.open("s1")
    store.create(header("s1")).close()  # the id is free again


@pytest.mark.parametrize(
    "session_id",
    [
        "",
        ".",
        "..",
        "../escape",
        "a/b",
        "a\\b",
        ".hidden",
        "a b",
        "a\x00b",
        "caf\u00e9",
        "a\n",
        "x" * 201,
    ],
)
def test_unsafe_session_ids_are_refused(store: JournalStore, session_id: str) -> None:
    with pytest.raises(ValueError, match="invalid session id"):
        store.path_for(session_id)
    with pytest.raises(ValueError, match="invalid session id"):
        store.open(session_id)
    with pytest.raises(ValueError, match="invalid session id"):
        store.exists(session_id)
    with pytest.raises(ValueError, match="invalid session id"):
        store.delete(session_id)
    with pytest.raises(ValueError, match="invalid session id"):
        store.create(header(session_id))
    assert not store.root.exists()


def test_safe_session_ids_are_accepted(store: JournalStore) -> None:
    for session_id in ["s1", "sess_0193.a-b", "0" * 200, "-x"]:
        store.create(header(session_id)).close()
        assert store.exists(session_id)


# --- size -------------------------------------------------------------------------------------


def test_ten_thousand_records_load_correctly(store: JournalStore) -> None:
    records: list[Record] = []
    for turn in range(10_000 // 6 + 1):
        records.extend(complete_turn(f"t{turn}", f"prompt {turn}"))
    records = records[:10_000]
    assert isinstance(records[-1], AssistantMessage)  # mid-turn: the load repairs it
    path = write_session(store, records)
    loaded = store.open("s1")
    assert loaded.records[:10_000] == records
    assert len(loaded.records) == 10_001
    assert loaded.records[-1] == TurnEndRecord(
        turn_id=records[-1].turn_id, outcome=InterruptedOutcome(), at=loaded.records[-1].at
    )
    loaded.journal.close()
    assert len(path.read_bytes().splitlines()) == 10_002


def test_journal_repr_and_state(store: JournalStore) -> None:
    journal = store.create(header("s1"))
    assert isinstance(journal, Journal)
    assert "open" in repr(journal) and not journal.closed
    journal.close()
    assert "closed" in repr(journal) and journal.closed
