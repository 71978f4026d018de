"""SessionState: a session's settings and landmarks, derived from its records in one pass."""

from __future__ import annotations

from typing import get_args

import msgspec

from acp_server.session import records as rec
from acp_server.session.state import ID_FIELDS, SETTINGS, SessionState

AT = "2026-12-02T00:00:00.000Z"


def prompt(turn_id: str, text: str) -> list[rec.Record]:
    return [
        rec.TurnStart(turn_id=turn_id, at=AT),
        rec.UserMessage(
            message_id=f"m_{turn_id}",
            content=[rec.TextPart(text=text), rec.ImagePart(data="", mime_type="image/png")],
            origin="prompt",
            turn_id=turn_id,
            at=AT,
        ),
        rec.TurnEndRecord(turn_id=turn_id, outcome=rec.Completed(), at=AT),
    ]


def test_an_empty_session_has_no_settings() -> None:
    state = SessionState.of([])
    assert state == SessionState()
    assert state.mode({"default"}) is None and state.rules_in(["/w"]) == []


def test_the_last_setting_of_each_kind_holds() -> None:
    first = rec.SystemPromptChange(mode="append", text="one", at=AT)
    last = rec.SystemPromptChange(mode="override", text="two", at=AT)
    records: list[rec.Record] = [
        rec.ModeChange(mode="read_only", at=AT),
        rec.ModelChange(model="echo", at=AT),
        first,
        *prompt("t1", "fix the bug"),
        rec.ModeChange(mode="accept_edits", at=AT),
        rec.ModelChange(model="openai:gpt-4o", at=AT),
        last,
        *prompt("t2", "and the other one"),
    ]
    state = SessionState.of(records)
    assert state.mode({"read_only", "accept_edits"}) == "accept_edits"
    assert state.model == "openai:gpt-4o"
    assert state.system_prompt == last
    assert state.first_prompt == "fix the bug"
    assert (state.last_turn_end, state.last_ended_turn) == (len(records) - 1, "t2")
    assert state.ids == {"t1", "t2", "m_t1", "m_t2"}


def test_a_mode_this_version_does_not_know_leaves_the_one_before() -> None:
    records: list[rec.Record] = [
        rec.ModeChange(mode="read_only", at=AT),
        rec.ModeChange(mode="from_the_future", at=AT),
    ]
    assert SessionState.of(records).mode({"default", "read_only"}) == "read_only"


def test_rules_hold_in_their_workspace_and_old_rules_everywhere() -> None:
    here = rec.PermissionRule(
        tool_kind="edit", decision="allow", scope="edit", workspace=["/w"], at=AT
    )
    elsewhere = rec.PermissionRule(
        tool_kind="execute", decision="reject", workspace=["/other"], at=AT
    )
    old = rec.PermissionRule(tool_kind="delete", decision="allow", at=AT)
    state = SessionState.of([here, elsewhere, old])
    assert state.rules == (here, elsewhere, old)
    assert state.rules_in(["/w"]) == [here, old]
    assert state.rules_in(["/w", "/extra"]) == [old]


def test_an_open_turn_is_not_a_fork_point() -> None:
    records = [*prompt("t1", "a"), rec.TurnStart(turn_id="t2", at=AT)]
    state = SessionState.of(records)
    assert (state.last_turn_end, state.last_ended_turn) == (2, "t1")
    assert "t2" in state.ids


def test_settings_are_the_record_kinds_that_set_state() -> None:
    assert set(SETTINGS) == {
        rec.ModeChange,
        rec.ModelChange,
        rec.PermissionRule,
        rec.SystemPromptChange,
    }


def test_ids_reserve_compaction_ids_too() -> None:
    """A reloaded deterministic session must not hand out `compact_0001` again."""
    records: list[rec.Record] = [
        *prompt("turn_0001", "read"),
        rec.Compaction(
            compaction_id="compact_0001",
            kept_from="m_turn_0001",
            summary="s",
            tokens_before=10,
            tokens_after=2,
            at=AT,
        ),
    ]
    assert "compact_0001" in SessionState.of(records).ids


def test_every_id_field_the_agent_makes_is_reserved() -> None:
    """Every `*_id` field of a record is one the agent makes (reserved), tool call ids
    included, so a new record type's id cannot be forgotten."""
    fields = {
        field.name
        for kind in get_args(rec.Record)
        for field in msgspec.structs.fields(kind)
        if field.name.endswith("_id")
    }
    assert fields == set(ID_FIELDS)


def test_ids_reserve_tool_call_ids_with_or_without_a_result() -> None:
    """A reloaded deterministic session must not hand out `call_0001` again, not even when
    the call's result is not in the log."""
    calls = [
        rec.ToolCallRecord(call_id=f"call_000{n}", model_call_id="call_1", name="t", arguments={})
        for n in (1, 2)
    ]
    records: list[rec.Record] = [
        rec.AssistantMessage(turn_id="t1", message_id="m1", parts=[], tool_calls=calls, at=AT),
        rec.ToolResult(turn_id="t1", call_id="call_0001", status="completed", output="", at=AT),
    ]
    ids = SessionState.of(records).ids
    assert {"call_0001", "call_0002"} <= ids
    assert "call_1" not in ids  # the model's: never one of ours
