"""Where a fork cuts its source's records: after the last ended turn, keeping later settings."""

from __future__ import annotations

from acp_server.session import records as rec
from acp_server.session.fork import fork_point

AT = "2026-12-01T00:00:00.000Z"


def turn(turn_id: str, *, ended: bool = True) -> list[rec.Record]:
    records: list[rec.Record] = [
        rec.TurnStart(turn_id=turn_id, at=AT),
        rec.UserMessage(
            message_id=f"m_{turn_id}",
            content=[rec.TextPart(text=turn_id)],
            origin="prompt",
            turn_id=turn_id,
            at=AT,
        ),
    ]
    if ended:
        records.append(rec.TurnEndRecord(turn_id=turn_id, outcome=rec.Completed(), at=AT))
    return records


def test_a_running_turn_is_left_out_and_later_settings_are_kept() -> None:
    mode = rec.ModeChange(mode="read_only", at=AT)
    records = [*turn("t1"), *turn("t2"), mode, *turn("t3", ended=False)]
    point = fork_point(records)
    assert point.turn_id == "t2"
    assert point.records == [*turn("t1"), *turn("t2"), mode]


def test_a_session_without_a_turn_forks_empty_but_for_its_settings() -> None:
    model = rec.ModelChange(model="echo", at=AT)
    point = fork_point([model, *turn("t1", ended=False)])
    assert point.turn_id is None
    assert point.records == [model]


def test_a_fork_leaves_the_background_items_to_its_source() -> None:
    started = rec.BackgroundStart(item="bg_1", call_id="c1", command="sleep 300", at=AT)
    ended = rec.BackgroundEnd(item="bg_1", how="exited", exit_code=0, at=AT)
    records = [*turn("t1")[:2], started, turn("t1")[2], ended]
    assert fork_point(records).records == turn("t1")
