"""Replay (acp_server/acp/replay.py) finds a call's result by its turn and id: every call of a
journal written before the agent made its own ids, a reused model id included, is shown as
itself once the load has made the ids unique."""

from __future__ import annotations

from acp_protocol.tool_call import ToolCall, ToolCallUpdate
from acp_server.acp.replay import replay_updates
from acp_server.session import records as rec
from acp_server.session.call_ids import unique_call_ids
from tests.support.legacy_calls import LEGACY, asked, call, result, turn


def test_replay_shows_each_call_of_a_legacy_journal_as_itself() -> None:
    updates = replay_updates(unique_call_ids(LEGACY))
    shown = [(u.tool_call_id, u.title, u.kind) for u in updates if isinstance(u, ToolCall)]
    assert shown == [
        ("call_1", "Read a.txt", "read"),
        ("call_1~2", "List .", "search"),
        ("call_1~3", "Read b.txt", "read"),
        ("call_1~4", "ls", "execute"),
    ]
    ended = [u.tool_call_id for u in updates if isinstance(u, ToolCallUpdate)]
    assert ended == [tool_call_id for tool_call_id, _, _ in shown]


def test_a_result_is_found_in_its_own_turn() -> None:
    """Two turns under one id, as a log not made unique would hold them: each call is shown
    with the result of its turn, not the session's last."""
    records: list[rec.Record] = [
        *turn("t1", asked("t1", call("c", "read_file")), result("t1", "c", "Read a", "read", "")),
        *turn("t2", asked("t2", call("c", "bash")), result("t2", "c", "ls", "execute", "")),
    ]
    shown = [(u.title, u.kind) for u in replay_updates(records) if isinstance(u, ToolCall)]
    assert shown == [("Read a", "read"), ("ls", "execute")]
