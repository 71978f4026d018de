"""`turn/end` forbids unknown fields on load; the other records stay tolerant.

A `"reason"` beside `"outcome": {"kind": "aborted"}` is the legacy cancel detail the seed notes
say load must reject, not drop. See
docs/rfc/implemented/architecture/2026-11-30-session-journal.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_server.session.journal import JournalCorrupt, JournalHeader, JournalStore
from acp_server.session.records import (
    Aborted,
    TextPart,
    ToolResult,
    TurnEndRecord,
    TurnStart,
    UserMessage,
    encode_record,
)

AT = "2026-11-30T04:05:06.123Z"


@pytest.fixture
def store(tmp_path: Path) -> JournalStore:
    return JournalStore(tmp_path / "data")


def _session(store: JournalStore, lines: list[dict[str, object]]) -> Path:
    """A journal of s1 whose record lines are exactly `lines` (raw JSON, unvalidated)."""
    header = JournalHeader(session_id="s1", cwd="/tmp", created_at=AT)
    store.create(header).close()
    path = store.path_for("s1")
    with open(path, "ab") as file:
        for line in lines:
            file.write(json.dumps(line).encode() + b"\n")
    return path


def _open_turn() -> list[dict[str, object]]:
    start = json.loads(encode_record(TurnStart(turn_id="t1", at=AT)))
    prompt = json.loads(
        encode_record(
            UserMessage(
                message_id="m1", content=[TextPart(text="go")], origin="prompt", turn_id="t1", at=AT
            )
        )
    )
    return [start, prompt]


@pytest.mark.parametrize("extra", [{"reason": "user"}, {"reason": None}, {"cause": "parent"}])
def test_an_extra_field_beside_the_outcome_fails_the_load_naming_the_record(
    store: JournalStore, extra: dict[str, object]
) -> None:
    end = {"type": "turn/end", "turn_id": "t1", "outcome": {"kind": "aborted"}, "at": AT, **extra}
    path = _session(store, [*_open_turn(), end])
    with pytest.raises(JournalCorrupt) as failed:
        store.open("s1")
    assert failed.value.record == 3
    assert str(failed.value).startswith(f"{path}: record 3 (line 4): ")
    assert f"unknown field `{next(iter(extra))}`" in str(failed.value)


def test_the_coarse_turn_end_still_loads(store: JournalStore) -> None:
    end = {"type": "turn/end", "turn_id": "t1", "outcome": {"kind": "aborted"}, "at": AT}
    _session(store, [*_open_turn(), end])
    loaded = store.open("s1")
    assert loaded.records[-1] == TurnEndRecord(turn_id="t1", outcome=Aborted(), at=AT)
    loaded.journal.close()


def test_other_records_ignore_unknown_fields(store: JournalStore) -> None:
    start, prompt = _open_turn()
    result = json.loads(
        encode_record(
            ToolResult(turn_id="t1", call_id="c1", status="completed", output="ok", at=AT)
        )
    )
    end = {"type": "turn/end", "turn_id": "t1", "outcome": {"kind": "completed"}, "at": AT}
    lines = [{**start, "newer": 1}, {**prompt, "newer": [1]}, {**result, "newer": {}}, end]
    _session(store, lines)
    loaded = store.open("s1")
    assert loaded.records[0] == TurnStart(turn_id="t1", at=AT)
    assert isinstance(loaded.records[2], ToolResult)
    assert not loaded.repaired
    loaded.journal.close()
