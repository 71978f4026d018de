"""The journal writer (acp_server/session/journal_writer.py, on acp_server/session/journal_fs.py):
each record one write of one line, sync and close fsync the file, and a flush fsyncs in a worker
thread. What a full disk does to it: tests/session/test_disk_full.py."""

from __future__ import annotations

import os
import threading

import pytest

from acp_server.session import journal_fs
from acp_server.session.journal import (
    Journal,
    JournalStore,
)
from acp_server.session.records import (
    TurnStart,
    encode_record,
)
from tests.support.journal_files import (
    AT,
    complete_turn,
    header,
)

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


def test_journal_repr_and_state(store: JournalStore) -> None:
    journal = store.create(header("s1"))
    assert isinstance(journal, Journal)
    assert "open" in repr(journal) and not journal.closed
    journal.close()
    assert "closed" in repr(journal) and journal.closed
