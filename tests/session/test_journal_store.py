"""The journal store (acp_server/session/journal_store.py): one writer per session, in this process
and across processes; listing sessions cheaply, skipping unreadable ones; deleting, and session
ids that cannot name a file elsewhere."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest

from acp_server.session.journal import (
    JournalLocked,
    JournalNotFound,
    JournalStore,
)
from acp_server.session.records import (
    Completed,
    ResourceLinkPart,
    TextPart,
    TurnEndRecord,
    TurnStart,
    UserMessage,
)
from tests.support.journal_files import (
    AT,
    REPO,
    append_raw,
    complete_turn,
    header,
    write_session,
)

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
