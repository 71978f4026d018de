"""A journal on a disk that fills up, errs or turns read-only: the file only ever holds whole
records in log order, unsaved records wait in memory and are written once there is room, and
every flush that leaves records unsaved raises an error naming the file and the cause.

In process, with `os.write`, `os.fsync` or `os.ftruncate` failing on cue (partial writes
included, which a full disk really does). The real process on a real full file system is in
tests/e2e/test_disk_full_acp.py.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from acp_server.session import journal as journal_module
from acp_server.session import journal_fs
from acp_server.session.journal import JournalStore, JournalWriteError
from acp_server.session.journal_format import JournalHeader
from acp_server.session.records import (
    AssistantMessage,
    Completed,
    Record,
    TextPart,
    TurnEndRecord,
    TurnStart,
    UserMessage,
)

AT = "2026-11-30T04:05:06.123Z"


def turn(turn_id: str, text: str = "hello") -> list[Record]:
    return [
        TurnStart(turn_id=turn_id, at=AT),
        UserMessage(
            turn_id=turn_id,
            message_id=f"m-{turn_id}",
            content=[TextPart(text=text)],
            origin="prompt",
            at=AT,
        ),
        AssistantMessage(
            turn_id=turn_id, message_id=f"a-{turn_id}", parts=[TextPart(text="ok")], at=AT
        ),
        TurnEndRecord(turn_id=turn_id, outcome=Completed(), at=AT),
    ]


@pytest.fixture
def store(tmp_path: Path) -> JournalStore:
    return JournalStore(tmp_path / "data")


def create(store: JournalStore) -> journal_module.Journal:
    return store.create(JournalHeader(session_id="s1", cwd="/w", created_at=AT))


@contextmanager
def failing_writes(
    monkeypatch: pytest.MonkeyPatch, code: int, *, partial: int = 0
) -> Iterator[list[int]]:
    """Every `os.write` first writes `partial` bytes (a full disk's short write), then the next
    one fails with `code`. Yields the list of attempted write sizes."""
    real_write = os.write
    attempts: list[int] = []
    state = {"short": False}

    def write(fd: int, data: bytes) -> int:
        attempts.append(len(data))
        if partial and not state["short"]:
            state["short"] = True
            return real_write(fd, bytes(data[:partial]))
        state["short"] = False
        raise OSError(code, os.strerror(code))

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", write)
        yield attempts


def reload_records(store: JournalStore) -> list[Record]:
    loaded = store.open("s1")
    try:
        assert loaded.truncated_bytes == 0  # never a torn line to cut off
        return loaded.records
    finally:
        loaded.journal.close()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO, errno.EROFS, errno.EFBIG])
def test_a_failed_write_leaves_no_partial_line_and_the_flush_names_the_cause(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    journal = create(store)
    first, second = turn("t1"), turn("t2")
    for record in first:
        journal.append(record)
    journal.sync()
    size = journal.path.stat().st_size
    with failing_writes(monkeypatch, code, partial=7):
        for record in second:
            journal.append(record)  # never raises: the records wait in memory
        assert journal.path.stat().st_size == size  # the short write was cut back off
        assert journal.unsaved
        with pytest.raises(JournalWriteError) as failed:
            journal.sync()
    error = failed.value
    assert error.errno == code and error.path == journal.path
    assert errno.errorcode[code] in str(error) and str(journal.path) in str(error)
    journal.close()  # room again: everything waiting is written on close
    assert reload_records(store) == first + second


@pytest.mark.anyio
async def test_unsaved_records_are_written_by_the_first_flush_that_has_room(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = create(store)
    with failing_writes(monkeypatch, errno.ENOSPC, partial=3):
        for record in turn("t1"):
            journal.append(record)
        with pytest.raises(JournalWriteError, match="ENOSPC"):
            await journal.flush()
        with pytest.raises(JournalWriteError, match="ENOSPC"):
            await journal.flush()  # still full: still unsaved, still said
    assert journal.unsaved
    for record in turn("t2"):
        journal.append(record)  # behind the backlog, in order
    await journal.flush()
    assert not journal.unsaved and journal.failure is None
    journal.close()
    assert reload_records(store) == turn("t1") + turn("t2")


def test_a_failed_fsync_rewrites_what_it_may_have_lost(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = create(store)
    for record in turn("t1"):
        journal.append(record)
    journal.sync()
    synced = journal.path.stat().st_size
    for record in turn("t2"):
        journal.append(record)
    calls: list[int] = []

    def fsync_eio(fd: int) -> None:
        calls.append(fd)
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(journal_fs, "F_FULLFSYNC", None)
    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", fsync_eio)
        with pytest.raises(JournalWriteError, match="EIO"):
            journal.sync()
    assert calls and journal.unsaved
    assert journal.path.stat().st_size == synced  # cut back to what an fsync confirmed
    journal.sync()  # written again and fsynced
    journal.close()
    assert reload_records(store) == turn("t1") + turn("t2")


def test_when_a_failed_write_cannot_be_cut_back_the_journal_stops_and_the_tail_is_dropped_on_load(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = create(store)
    for record in turn("t1"):
        journal.append(record)
    journal.sync()

    def no_truncate(fd: int, length: int) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    with failing_writes(monkeypatch, errno.EIO, partial=5), monkeypatch.context() as patch:
        patch.setattr(os, "ftruncate", no_truncate)
        journal.append(TurnStart(turn_id="t2", at=AT))
    assert journal.unsaved
    for record in turn("t2")[1:]:
        journal.append(record)  # kept in memory, never appended after the torn bytes
    with pytest.raises(JournalWriteError, match="EIO"):
        journal.sync()
    with pytest.raises(JournalWriteError):
        journal.close()
    loaded = store.open("s1")
    assert loaded.truncated_bytes == 5 and loaded.records == turn("t1")
    loaded.journal.close()


def test_only_the_first_failure_is_logged_and_recovery_is_said(
    store: JournalStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    journal = create(store)
    with failing_writes(monkeypatch, errno.ENOSPC):
        for record in turn("t1") + turn("t2"):
            journal.append(record)
    assert sum("cannot save session s1" in r.getMessage() for r in caplog.records) == 1
    journal.sync()
    assert any("saved again" in r.getMessage() for r in caplog.records)
    journal.close()
