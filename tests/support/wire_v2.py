"""Validation of agent->client frames of a v2 connection against the vendored v2 schema
(tests/data/acp/v2/schema.json), plus what the schema alone cannot catch.

The v2 schema's unions are open: an unknown tag is a valid "other" variant, so a v1 shape
leaking onto a v2 connection (a `tool_call` update, a `plan`) validates. So every update is also
held to an allow-list of the v2 tags, states, stop reasons, tool call statuses and content types
this agent may send, and every object to the members its definition declares (a misnamed field
passes the schema, which never forbids additional properties). `replay_complete` is newer than
the 2.4.0 schema (the spec's rfds/v2/session-replay-complete): its members are checked here.
Frames only the unstable schema describes (the `initialize` answer with the `fork` and
`systemPrompt` markers, `session/fork`) are checked against `schema.unstable.json`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from .v2_schema import STABLE, UNSTABLE, V2Schema

UPDATE_TAGS = frozenset(
    {
        "user_message_chunk",
        "user_message",
        "agent_message_chunk",
        "agent_message",
        "agent_thought_chunk",
        "agent_thought",
        "state_update",
        "tool_call_content_chunk",
        "tool_call_update",
        "terminal_update",
        "terminal_output_chunk",
        "plan_update",
        "available_commands_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
        "replay_complete",
    }
)
"""The v2 `sessionUpdate` tags this agent may send (v1's `tool_call`, `plan`,
`current_mode_update` are not among them)."""
STATES = frozenset({"running", "requires_action", "idle"})
STOP_REASONS = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"}
)
TOOL_CALL_STATUSES = frozenset({"pending", "in_progress", "completed", "failed", "cancelled"})
TOOL_CALL_CONTENT = frozenset({"content", "diff", "terminal"})
CONTENT_BLOCKS = frozenset({"text", "image", "audio", "resource_link", "resource"})
UNSTABLE_METHODS = frozenset({"initialize", "session/fork"})
"""Methods whose answer may carry what only the unstable schema declares."""


@cache
def _envelope(schema: V2Schema) -> Draft202012Validator:
    raw = schema.raw
    return Draft202012Validator(
        {"$schema": raw["$schema"], "$defs": raw["$defs"], **raw["anyOf"][0]}
    )


def _problems(schema: V2Schema, name: str, value: Any) -> list[str]:
    return [
        *schema.errors(value, name),
        *(
            f"undeclared member {k}"
            for k in schema.unknown_keys(value, {"$ref": f"#/$defs/{name}"})
        ),
    ]


def update_problems(update: Any) -> list[str]:
    """What in one `session/update`'s `update` the v2 schema and the allow-lists refuse."""
    if not isinstance(update, dict):
        return [f"not an object: {update!r}"]
    tag = update.get("sessionUpdate")
    if tag not in UPDATE_TAGS:
        return [f"sessionUpdate {tag!r} is not a v2 update this agent sends"]
    problems: list[str] = []
    if tag == "replay_complete":
        extra = set(update) - {"sessionUpdate", "_meta"}
        problems += [f"replay_complete has members {sorted(extra)}"] if extra else []
    else:
        problems += _problems(STABLE, "SessionUpdate", update)
    if tag == "state_update":
        if update.get("state") not in STATES:
            problems.append(f"state {update.get('state')!r}")
        if "stopReason" in update and update["stopReason"] not in STOP_REASONS:
            problems.append(f"stopReason {update['stopReason']!r}")
    if tag == "tool_call_update":
        if "status" in update and update["status"] not in TOOL_CALL_STATUSES:
            problems.append(f"tool call status {update['status']!r}")
        for item in update.get("content") or []:
            if item.get("type") not in TOOL_CALL_CONTENT:
                problems.append(f"tool call content {item.get('type')!r}")
            elif item["type"] == "content" and item["content"].get("type") not in CONTENT_BLOCKS:
                problems.append(f"content block {item['content'].get('type')!r}")
    if tag in ("user_message", "agent_message", "agent_thought"):
        for block in update.get("content") or []:
            if block.get("type") not in CONTENT_BLOCKS:
                problems.append(f"content block {block.get('type')!r}")
    chunk = tag.endswith("_chunk") and tag != "tool_call_content_chunk"
    if chunk and update.get("content", {}).get("type") not in CONTENT_BLOCKS:
        problems.append(f"content block {update['content'].get('type')!r}")
    return problems


def validate_agent_frame_v2(frame: dict[str, Any], request_method: str | None = None) -> None:
    """Assert `frame` (agent->client, on a v2 connection) is valid v2: the envelope, then the
    params or the result by method (`request_method`: the client request a response answers),
    then the allow-lists."""
    envelope = [e.message for e in _envelope(STABLE).iter_errors(frame)]
    assert not envelope, f"invalid v2 frame {frame}: {envelope}"
    if "method" in frame:
        method = frame["method"]
        params = frame.get("params")
        defs = STABLE.methods().get(method)
        assert defs is not None and defs["side"] != {"agent"}, f"agent sent {method}"
        if method == "session/update":
            problems = STABLE.errors(params, "UpdateSessionNotification")
            problems += update_problems(params.get("update") if isinstance(params, dict) else None)
        else:
            problems = _problems(STABLE, defs["params"], params)
        assert not problems, f"invalid v2 {method} params {frame}: {problems}"
    elif "result" in frame and request_method is not None:
        schema = UNSTABLE if request_method in UNSTABLE_METHODS else STABLE
        defs = schema.methods().get(request_method)
        if defs is not None and defs["result"] is not None:
            problems = _problems(schema, defs["result"], frame["result"])
            assert not problems, f"invalid v2 {request_method} result {frame}: {problems}"
    elif "error" in frame:
        problems = STABLE.errors(frame["error"], "Error")
        assert not problems, f"invalid v2 error {frame}: {problems}"


TURN_UPDATES = frozenset(
    {
        "user_message",
        "user_message_chunk",
        "agent_message_chunk",
        "agent_message",
        "agent_thought_chunk",
        "agent_thought",
        "tool_call_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
        "plan_update",
        "compaction_update",
        "compaction_summary_chunk",
    }
)
"""Updates that belong to a turn (the rest are session-level: commands, title, config options,
usage, notices, state)."""
TURN_REQUESTS = frozenset({"session/request_permission", "elicitation/create"})


def after_idle(frames: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    """Frames of a turn that came after the session's idle state and before its next
    `running`: what "nothing of a turn after its idle" forbids (empty when it held). A resume's
    replay (the frames right before its `replay_complete`) is history, not a live turn."""
    idle = True  # a session starts idle
    found: list[dict[str, Any]] = []
    since_state = 0  # how many of `found` came since the last state update
    for frame in frames:
        params = frame.get("params")
        if not isinstance(params, dict) or params.get("sessionId") != session_id:
            continue
        if frame.get("method") == "session/update":
            update = params["update"]
            if update["sessionUpdate"] == "state_update":
                idle = update["state"] == "idle"
                since_state = 0
            elif update["sessionUpdate"] == "replay_complete":
                del found[len(found) - since_state :]
                since_state = 0
            elif idle and update["sessionUpdate"] in TURN_UPDATES:
                found.append(frame)
                since_state += 1
        elif idle and frame.get("method") in TURN_REQUESTS:
            found.append(frame)
    return found
