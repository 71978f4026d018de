"""The check every end-to-end test runs on each agent->client frame (tests/support/wire.py)
accepts valid ACP and refuses each kind of violation, naming where it is."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.wire import validate_agent_frame


def update(content: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {"sessionUpdate": "agent_message_chunk", "content": content},
        },
    }


def test_valid_frames_pass() -> None:
    validate_agent_frame(update({"type": "text", "text": "hello"}))
    validate_agent_frame(
        {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}, "session/prompt"
    )
    validate_agent_frame({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "bad"}})


@pytest.mark.parametrize(
    ("frame", "method", "message"),
    [
        (update({"type": "txt", "text": "hello"}), None, "invalid session/update params"),
        ({**update({"type": "text", "text": "x"}), "jsonrpc": "1.0"}, None, "invalid agent frame"),
        ({"jsonrpc": "2.0", "method": "session/nope", "params": {}}, None, "unknown method"),
        (
            {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "done"}},
            "session/prompt",
            "invalid session/prompt result",
        ),
        ({"jsonrpc": "2.0", "id": 4, "error": {"code": "x", "message": "m"}}, None, "invalid"),
    ],
)
def test_each_violation_is_refused(frame: dict[str, Any], method: str | None, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        validate_agent_frame(frame, method)


def test_the_refusal_names_the_path_of_the_violation() -> None:
    with pytest.raises(AssertionError) as refused:
        validate_agent_frame(update({"type": "txt", "text": "hello"}))
    assert re.search(r"['\"]update: ", str(refused.value))  # the path inside the params
