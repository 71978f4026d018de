"""Checks of agent->client frames against the vendored schema *and* the types newer than it.

A frame whose `session/update` kind the stable schema does not know (`plan_update`, ...) is
checked against the unstable schema (tests/data/acp/schema.unstable.json, the newest schema we
have, which has these types) and against the field lists written from the docs
(tests/data/acp/newer_fields.json, each entry citing the page it was written from); a known
frame is checked against the stable schema, then its newer parts (the prompt response's
`usage`, the system-prompt capability) against the unstable schema and their lists.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from .wire import validate_agent_frame

DATA = Path(__file__).resolve().parent.parent / "data" / "acp"
FIELDS_PATH = DATA / "newer_fields.json"


@cache
def _unstable_validator(name: str) -> Draft202012Validator:
    schema = json.loads((DATA / "schema.unstable.json").read_text())
    return Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    )


def unstable_problems(name: str, value: Any) -> list[str]:
    """Violations of `$defs/name` of the unstable schema by `value`."""
    return [f"{name}: {e.message}" for e in _unstable_validator(name).iter_errors(value)]


@cache
def newer_fields() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(FIELDS_PATH.read_text())
    return {name: entry for name, entry in data.items() if not name.startswith("_")}


def field_problems(name: str, value: Any) -> list[str]:
    """What in `value` breaks the field list of the newer type `name`."""
    entry = newer_fields()[name]
    if not isinstance(value, dict):
        return [f"{name}: not an object: {value!r}"]
    allowed = set(entry["required"]) | set(entry["optional"])
    problems = [f"{name}: missing {key}" for key in entry["required"] if key not in value]
    problems += [f"{name}: unknown field {key}" for key in value if key not in allowed]
    return problems


def _newer_update_problems(update: dict[str, Any]) -> list[str]:
    kind = update.get("sessionUpdate")
    problems = field_problems(kind, update)
    if kind == "plan_update":
        plan = update.get("plan")
        if isinstance(plan, dict) and plan.get("type") == "items":
            problems += field_problems("PlanItems", plan)
        else:
            problems.append(f"plan_update: plan of a type we never send: {plan!r}")
    return problems


def validate_frame(frame: dict[str, Any], request_method: str | None = None) -> None:
    """Assert `frame` (agent->client) is valid: schema, or newer-type field lists."""
    params = frame.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if (
        frame.get("method") == "session/update"
        and isinstance(update, dict)
        and update.get("sessionUpdate") in newer_fields()
    ):
        # The docs' `description` is newer than the unstable schema's SubagentUpdate.
        older = {**params, "update": {k: v for k, v in update.items() if k != "description"}}
        problems = _newer_update_problems(update) + unstable_problems("SessionNotification", older)
        assert not problems, f"invalid newer update {frame}: {problems}"
        return
    if (
        frame.get("method") == "session/update"
        and isinstance(update, dict)
        and isinstance(update.get("content"), list)
        and any(isinstance(c, dict) and c.get("type") == "session" for c in update["content"])
    ):
        # `session` tool call content is newer than both schemas: checked against its field
        # list, the rest of the frame against the stable schema.
        links = [c for c in update["content"] if c.get("type") == "session"]
        problems = [p for c in links for p in field_problems("SessionToolCallContent", c)]
        assert not problems, f"invalid session content {frame}: {problems}"
        rest = [c for c in update["content"] if c.get("type") != "session"]
        frame = {**frame, "params": {**params, "update": {**update, "content": rest}}}
    validate_agent_frame(frame, request_method)
    result = frame.get("result")
    if not isinstance(result, dict):
        return
    problems: list[str] = []
    if request_method == "session/prompt" and "usage" in result:
        problems += field_problems("Usage", result["usage"])
        problems += unstable_problems("PromptResponse", result)
    if request_method == "initialize":
        session = result.get("agentCapabilities", {}).get("sessionCapabilities", {})
        prompt = session.get("systemPrompt")
        if prompt is not None:
            problems += field_problems("SessionSystemPromptCapabilities", prompt)
            problems += unstable_problems("SessionSystemPromptCapabilities", prompt)
            if prompt.get("mode") is not None:
                problems += field_problems("SessionSystemPromptModeCapabilities", prompt["mode"])
    assert not problems, f"invalid {request_method} result {frame}: {problems}"
