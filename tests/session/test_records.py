"""Durable session records: round trips, the exact aborted form, and strict outcome decoding."""

from __future__ import annotations

import json
import re
import time

import msgspec
import pytest

from acp_server.session.records import (
    RECORD_DECODER,
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
    decode_record,
    encode_record,
    utc_now,
)

AT = "2026-11-30T04:05:06.123Z"

OUTCOMES: list[Outcome] = [
    Completed(),
    Aborted(),
    ErrorOutcome(message="boom"),
    ErrorOutcome(message="rate limited", code="429"),
    DisposedOutcome(),
    MaxTokens(),
    MaxTurnRequests(),
    Refusal(),
    InterruptedOutcome(),
]

RECORDS: list[Record] = [
    TurnStart(turn_id="t1", at=AT),
    UserMessage(
        message_id="m1",
        content=[
            TextPart(text="hello"),
            ImagePart(data="aGk=", mime_type="image/png"),
            ImagePart(data="aGk=", mime_type="image/png", uri="file:///a.png"),
            ResourcePart(uri="file:///a.txt", text="contents", mime_type="text/plain"),
            ResourcePart(uri="file:///b.bin", blob="AAE="),
            ResourceLinkPart(uri="file:///c", name="c"),
            ResourceLinkPart(
                uri="file:///d",
                name="d",
                mime_type="text/x-python",
                title="D",
                description="a file",
                size=12,
            ),
        ],
        origin="prompt",
        turn_id="t1",
        at=AT,
    ),
    UserMessage(message_id="m2", content=[TextPart(text="fyi")], origin="context", at=AT),
    UserMessage(
        message_id="m3", content=[TextPart(text="stop")], origin="steering", turn_id="t1", at=AT
    ),
    StepStart(turn_id="t1", step=1, at=AT),
    AssistantMessage(turn_id="t1", message_id="a1", parts=[TextPart(text="done")], at=AT),
    AssistantMessage(
        turn_id="t1",
        message_id="a2",
        parts=[ThoughtPart(text="hmm"), TextPart(text="reading")],
        tool_calls=[
            ToolCallRecord(call_id="c1", name="read_file", arguments={"path": "a.txt"}),
            ToolCallRecord(call_id="c2", name="bash", arguments={"command": "ls", "n": [1, None]}),
        ],
        at=AT,
    ),
    ToolResult(turn_id="t1", call_id="c1", status="completed", output="contents", at=AT),
    ToolResult(turn_id="t1", call_id="c2", status="failed", output="denied", at=AT),
    ToolResult(
        turn_id="t1", call_id="c3", status="failed", output="not run", synthetic="not_run", at=AT
    ),
    ToolResult(
        turn_id="t1",
        call_id="c4",
        status="failed",
        output="lost",
        synthetic="outcome_unknown",
        at=AT,
    ),
    StepEnd(turn_id="t1", step=1, finish="tool_calls", at=AT),
    *(TurnEndRecord(turn_id="t1", outcome=outcome, at=AT) for outcome in OUTCOMES),
]


def turn_end_json(outcome: object) -> bytes:
    return json.dumps({"type": "turn/end", "turn_id": "t1", "outcome": outcome, "at": AT}).encode()


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_round_trips(record: Record) -> None:
    data = encode_record(record)
    decoded = decode_record(data)
    assert decoded == record
    assert type(decoded) is type(record)
    assert encode_record(decoded) == data
    assert b"\n" not in data


@pytest.mark.parametrize("outcome", OUTCOMES, ids=lambda o: type(o).__name__)
def test_every_outcome_round_trips_inside_a_turn_end(outcome: Outcome) -> None:
    record = TurnEndRecord(turn_id="t1", outcome=outcome, at=AT)
    decoded = decode_record(encode_record(record))
    assert isinstance(decoded, TurnEndRecord)
    assert decoded.outcome == outcome
    assert type(decoded.outcome) is type(outcome)


def test_record_tags_are_the_stable_wire_names() -> None:
    tags = {type(r).__name__: json.loads(encode_record(r))["type"] for r in RECORDS}
    assert tags == {
        "TurnStart": "turn/start",
        "UserMessage": "message/user",
        "StepStart": "step/start",
        "AssistantMessage": "message/assistant",
        "ToolResult": "tool/result",
        "StepEnd": "step/end",
        "TurnEndRecord": "turn/end",
    }
    kinds = [json.loads(msgspec.json.encode(o))["kind"] for o in OUTCOMES]
    assert kinds == [
        "completed",
        "aborted",
        "error",
        "error",
        "disposed",
        "max_tokens",
        "max_turn_requests",
        "refusal",
        "interrupted",
    ]


def test_every_outcome_type_is_named_for_its_kind() -> None:
    """The type and the tag agree (issue 25 item 5): `InterruptedOutcome` is `interrupted`,
    and a journal written before the rename (the tag is what is on disk) loads the same."""
    for outcome in OUTCOMES:
        kind = json.loads(msgspec.json.encode(outcome))["kind"]
        name = type(outcome).__name__.removesuffix("Outcome")
        assert name.lower() == kind.replace("_", ""), (name, kind)
    old = b'{"type":"turn/end","turn_id":"t1","outcome":{"kind":"interrupted"},"at":"x"}'
    assert decode_record(old) == TurnEndRecord(turn_id="t1", outcome=InterruptedOutcome(), at="x")


def test_aborted_turn_end_is_exactly_the_coarse_form() -> None:
    data = encode_record(TurnEndRecord(turn_id="t1", outcome=Aborted(), at=AT))
    assert data == (
        b'{"type":"turn/end","turn_id":"t1","outcome":{"kind":"aborted"},'
        b'"at":"2026-11-30T04:05:06.123Z"}'
    )
    obj = json.loads(data)
    assert set(obj) == {"type", "turn_id", "outcome", "at"}
    assert obj["outcome"] == {"kind": "aborted"}
    assert msgspec.json.encode(Aborted()) == b'{"kind":"aborted"}'


def test_optional_fields_are_left_out_at_their_defaults() -> None:
    idle = json.loads(
        encode_record(UserMessage(message_id="m", content=[], origin="context", at=AT))
    )
    assert "turn_id" not in idle
    answer = json.loads(
        encode_record(AssistantMessage(turn_id="t", message_id="a", parts=[], at=AT))
    )
    assert "tool_calls" not in answer
    result = json.loads(
        encode_record(ToolResult(turn_id="t", call_id="c", status="completed", output="", at=AT))
    )
    assert "synthetic" not in result
    error = json.loads(
        encode_record(TurnEndRecord(turn_id="t", outcome=ErrorOutcome(message="x"), at=AT))
    )
    assert error["outcome"] == {"kind": "error", "message": "x"}


def test_defaults_fill_in_when_decoding() -> None:
    idle = decode_record(
        b'{"type":"message/user","message_id":"m","content":[],"origin":"context","at":"x"}'
    )
    assert isinstance(idle, UserMessage)
    assert idle.turn_id is None
    answer = decode_record(
        b'{"type":"message/assistant","turn_id":"t","message_id":"a","parts":[],"at":"x"}'
    )
    assert isinstance(answer, AssistantMessage)
    assert answer.tool_calls == []


def test_synthetic_tool_result_values() -> None:
    for synthetic in ("not_run", "outcome_unknown"):
        data = (
            b'{"type":"tool/result","turn_id":"t","call_id":"c","status":"failed",'
            b'"output":"o","synthetic":"' + synthetic.encode() + b'","at":"x"}'
        )
        decoded = decode_record(data)
        assert isinstance(decoded, ToolResult)
        assert decoded.synthetic == synthetic
    bad = (
        b'{"type":"tool/result","turn_id":"t","call_id":"c","status":"failed",'
        b'"output":"o","synthetic":"made_up","at":"x"}'
    )
    with pytest.raises(msgspec.ValidationError, match="synthetic"):
        decode_record(bad)


def test_legacy_reason_bearing_aborted_record_is_rejected() -> None:
    with pytest.raises(msgspec.ValidationError) as info:
        decode_record(turn_end_json({"kind": "aborted", "reason": "user"}))
    assert "reason" in str(info.value)
    assert "unknown field" in str(info.value)


@pytest.mark.parametrize(
    ("outcome", "extra"),
    [
        ({"kind": "aborted", "cause": {"kind": "parent"}}, "cause"),
        ({"kind": "aborted", "message": "cancelled by user"}, "message"),
        ({"kind": "error", "message": "boom", "stack": "Traceback ..."}, "stack"),
        ({"kind": "error", "message": "boom", "code": "x", "reason": "user"}, "reason"),
        ({"kind": "completed", "reason": None}, "reason"),
        ({"kind": "disposed", "extra": 1}, "extra"),
        ({"kind": "interrupted", "at": "x"}, "at"),
    ],
)
def test_any_extra_outcome_field_is_rejected(outcome: dict[str, object], extra: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=f"unknown field `{extra}`"):
        decode_record(turn_end_json(outcome))


def test_error_outcome_needs_a_message() -> None:
    with pytest.raises(msgspec.ValidationError, match="message"):
        decode_record(turn_end_json({"kind": "error"}))


@pytest.mark.parametrize(
    "data",
    [
        b'{"type":"turn/pause","turn_id":"t1","at":"x"}',
        b'{"turn_id":"t1","at":"x"}',
        b'{"type":"turn/end","turn_id":"t1","outcome":{"kind":"cancelled"},"at":"x"}',
        b'{"type":"message/user","message_id":"m","content":[{"type":"audio","data":""}],'
        b'"origin":"prompt","at":"x"}',
        b'{"type":"message/user","message_id":"m","content":[],"origin":"system","at":"x"}',
    ],
)
def test_unknown_record_part_or_outcome_kinds_fail(data: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        decode_record(data)


def test_decode_errors_propagate_unchanged() -> None:
    with pytest.raises(msgspec.DecodeError):
        decode_record(b"{not json")
    assert RECORD_DECODER.decode(encode_record(RECORDS[0])) == RECORDS[0]


def test_records_are_frozen() -> None:
    record = TurnStart(turn_id="t1", at=AT)
    with pytest.raises(AttributeError):
        record.turn_id = "t2"  # type: ignore[misc]


def test_utc_now_format() -> None:
    stamp = utc_now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)


def test_utc_now_is_utc_with_milliseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2026-11-30T04:05:06.123999Z: milliseconds are truncated, never rounded up.
    monkeypatch.setattr(time, "time_ns", lambda: 1_796_011_506_123_999_000)
    assert utc_now() == "2026-11-30T04:05:06.123Z"
    monkeypatch.setattr(time, "time_ns", lambda: 7_000_000)
    assert utc_now() == "1970-01-01T00:00:00.007Z"


def test_utc_now_tracks_the_clock() -> None:
    before = time.strftime("%Y-%m-%dT%H:%M", time.gmtime())
    stamp = utc_now()
    after = time.strftime("%Y-%m-%dT%H:%M", time.gmtime())
    assert stamp[:16] in {before, after}
