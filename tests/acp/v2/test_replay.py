"""A journal replayed as v2 updates (acp_server/acp/v2/replay.py). Replay in a new process under
the ids the client saw live: tests/e2e/test_v2_client.py::
test_a_resume_with_replay_in_a_new_process_shows_the_ids_seen_live."""

from __future__ import annotations

from acp_protocol.content import TextContent
from acp_protocol.tool_call import ContentToolCallContent
from acp_protocol.tool_call import ToolCallUpdate as ToolCallUpdateV1
from acp_protocol.v2.tool_call import ToolCallUpdate
from acp_server.acp.replay import replay_updates
from acp_server.acp.v2.replay import replay_v2
from acp_server.session import records as rec
from acp_server.session.stopped_calls import ABORTED_CALL_OUTPUT
from tests.support.legacy_calls import AT, asked, call, result, turn


def texts(content: object) -> list[str]:
    assert isinstance(content, list)
    return [
        c.content.text
        for c in content
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContent)
    ]


def test_a_background_commands_end_follows_its_calls_output_as_on_v1() -> None:
    records: list[rec.Record] = [
        *turn(
            "t1",
            asked("t1", call("c1", "bash", command="sleep 60", background=True)),
            rec.BackgroundStart(item="bg_1", call_id="c1", command="sleep 60", at=AT),
            result("t1", "c1", "sleep 60", "execute", "started bg_1"),
        ),
        rec.BackgroundEnd(item="bg_1", how="exited", exit_code=0, at=AT),
    ]
    [v2_result] = [
        u for u in replay_v2(records, "/") if isinstance(u, ToolCallUpdate) and u.content
    ]
    [v1_result] = [u for u in replay_updates(records) if isinstance(u, ToolCallUpdateV1)]
    assert texts(v2_result.content) == texts(v1_result.content)
    [shown] = texts(v2_result.content)
    assert shown.startswith("started bg_1\n[bg_1 has ended: it ")


def test_a_call_the_abort_stopped_is_replayed_cancelled_on_v2_and_failed_on_v1() -> None:
    records: list[rec.Record] = [
        rec.TurnStart(turn_id="t1", at=AT),
        asked("t1", call("c1", "bash", command="sleep 60")),
        rec.ToolResult(
            turn_id="t1",
            call_id="c1",
            status="failed",
            output=ABORTED_CALL_OUTPUT,
            title="sleep 60",
            kind="execute",
            at=AT,
        ),
        rec.TurnEndRecord(turn_id="t1", outcome=rec.Aborted(), at=AT),
    ]
    [v2_result] = [
        u for u in replay_v2(records, "/") if isinstance(u, ToolCallUpdate) and u.content
    ]
    [v1_result] = [u for u in replay_updates(records) if isinstance(u, ToolCallUpdateV1)]
    assert (v2_result.status, v1_result.status) == ("cancelled", "failed")
    assert texts(v2_result.content) == texts(v1_result.content) == [ABORTED_CALL_OUTPUT]
