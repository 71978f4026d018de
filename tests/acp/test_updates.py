"""Runtime events as v1 `session/update`s (acp_server/acp/updates.py), each checked against the
ACP schema: the model's words and the agent's own (marked in `_meta`), thoughts, a tool call
announced and its end (a cancelled call reads `failed`: v1 has no `cancelled`), a quiet model
request as a usage update, and compactions shown as `compaction_update` only to a client that
advertised them. Live and replayed through the real process: tests/e2e/test_tool_updates.py;
every update before the prompt's answer: tests/acp/test_update_order.py."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from acp_protocol.initialize import ClientCapabilities
from acp_server.acp.updates import (
    AGENT_ORIGIN,
    compaction_updates,
    shows_compactions,
    update_for,
)
from acp_server.agent import (
    AgentEvent,
    CompactionEnded,
    CompactionStarted,
    MessageChunk,
    ModelWaiting,
    ThoughtChunk,
    ToolCallAnnounced,
    ToolCallProgress,
    TurnStarting,
)
from acp_server.tools.base import Location
from tests.support.wire import validate_agent_frame


def shown(event: AgentEvent) -> dict[str, Any]:
    """The update `event` is shown as, after checking it as a `session/update` frame."""
    update = update_for(event)
    assert update is not None
    return frame(update)


def frame(update: Any) -> dict[str, Any]:
    encoded: dict[str, Any] = msgspec.to_builtins(update)
    validate_agent_frame(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s1", "update": encoded},
        }
    )
    return encoded


def test_the_models_words_and_the_agents_own_are_told_apart() -> None:
    model = shown(MessageChunk("t1", "m1", "hello"))
    assert model == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hello"},
        "messageId": "m1",
    }
    own = shown(MessageChunk("t1", "m2", "stopped", from_agent=True))
    assert own["_meta"] == AGENT_ORIGIN
    assert shown(ThoughtChunk("t1", "m3", "hmm"))["sessionUpdate"] == "agent_thought_chunk"


def test_an_announced_call_is_pending_with_a_one_line_title_its_input_and_locations() -> None:
    event = ToolCallAnnounced(
        "t1",
        "c1",
        "read_file",
        "Read a.py\n\x1b[2J",
        "read",
        {"path": "a.py"},
        (Location("/w/a.py", 3),),
    )
    call = shown(event)
    assert call["sessionUpdate"] == "tool_call" and call["status"] == "pending"
    assert "\n" not in call["title"] and "\x1b" not in call["title"]
    assert call["rawInput"] == {"path": "a.py"}
    assert call["locations"] == [{"path": "/w/a.py", "line": 3}]


@pytest.mark.parametrize(("status", "wire"), [("completed", "completed"), ("cancelled", "failed")])
def test_a_call_ends_with_its_output_and_a_cancelled_one_reads_failed(
    status: Any, wire: str
) -> None:
    update = shown(ToolCallProgress("t1", "c1", status, output="done"))
    assert update["sessionUpdate"] == "tool_call_update" and update["status"] == wire
    assert update["content"] == [{"type": "content", "content": {"type": "text", "text": "done"}}]


def test_a_quiet_model_request_is_a_usage_update_saying_how_long() -> None:
    update = shown(ModelWaiting("t1", 12.5, 3000, 8192))
    assert (update["used"], update["size"]) == (3000, 8192)
    assert update["_meta"] == {"acp-server": {"modelWaitingSeconds": 12.5}}


def test_events_the_client_does_not_see_have_no_update() -> None:
    assert update_for(TurnStarting("t1")) is None


def test_a_compaction_is_its_own_update_only_where_the_client_advertised_it() -> None:
    opted_in = msgspec.json.decode(b'{"session": {"compaction": {}}}', type=ClientCapabilities)
    assert shows_compactions(opted_in) and not shows_compactions(ClientCapabilities())
    started = CompactionStarted("t1", "k1")
    ended = CompactionEnded("t1", "k1", "completed", None, None, tokens=900, window=8192)
    assert [frame(u)["sessionUpdate"] for u in compaction_updates(started, True)] == [
        "compaction_update"
    ]
    assert compaction_updates(started, False) == []
    told = [frame(u) for u in compaction_updates(ended, False)]
    assert [u["sessionUpdate"] for u in told] == ["agent_thought_chunk", "usage_update"]
    assert told[0]["content"]["text"] == "(Compacted the conversation to ~900 tokens.)"
