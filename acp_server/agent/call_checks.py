"""What the loop checks about the model's tool calls before and after running them.

Bad model output is answered to the model, never turned into a turn error: a call whose
arguments are not a JSON object, that names no offered tool, or whose arguments do not match
the tool's schema fails with a message saying what was wrong and what the tool takes, and the
turn goes on (`call_problem`). A model that makes the same call and gets the same result again
is told so; after `max_repeats` such repeats in one turn the turn ends with a message instead
of spending the rest of the step limit (`RepeatedCalls`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import msgspec

from acp_server.models.base import ToolCallRequest
from acp_server.tools.base import Tool, ToolOutput

from .no_progress import call_key, stable_text
from .settings import DEFAULT_MAX_REPEATED_CALLS

__all__ = ["RepeatedCalls", "call_problem", "schema_problems"]


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}
_EXCERPT = 200


def _matches(value: Any, kind: Any) -> bool:
    """Whether `value` has the JSON type `kind` (a name or a list of names); unknown or
    missing types match anything."""
    kinds = kind if isinstance(kind, list) else [kind]
    known = [k for k in kinds if isinstance(k, str) and k in _JSON_TYPES]
    if not known:
        return True
    for name in known:
        if isinstance(value, bool) and name in ("integer", "number"):
            continue  # JSON true is not a number, though Python's bool is an int
        if isinstance(value, _JSON_TYPES[name]):
            return True
    return False


def _type_name(value: Any) -> str:
    for name in ("boolean", "string", "integer", "number", "array", "object", "null"):
        if _matches(value, name):
            return name
    return type(value).__name__


def schema_problems(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """What is wrong with `arguments` at the top level of an object `schema`: missing required
    properties, properties of the wrong JSON type, and unknown properties when the schema
    forbids them. Deeper checks are the tool's own."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    problems = [
        f"missing required property {name!r}"
        for name in (required if isinstance(required, list) else [])
        if isinstance(name, str) and name not in arguments
    ]
    for name, value in arguments.items():
        spec = properties.get(name)
        if isinstance(spec, dict) and "type" in spec and not _matches(value, spec["type"]):
            problems.append(f"{name!r} must be {_kind(spec)}, not {_type_name(value)}")
        elif spec is None and schema.get("additionalProperties") is False:
            problems.append(f"unknown property {name!r}")
    return problems


def _kind(spec: Mapping[str, Any]) -> str:
    kind = spec.get("type")
    return " or ".join(kind) if isinstance(kind, list) else str(kind)


def _signature(tool: Tool) -> str:
    """`name(path: string, required; limit: integer)`, from the tool's schema."""
    schema = tool.parameters
    properties = schema.get("properties")
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    described = [
        f"{name}: {_kind(spec) if isinstance(spec, dict) and 'type' in spec else 'any'}"
        + (", required" if name in required else "")
        for name, spec in (properties.items() if isinstance(properties, dict) else ())
    ]
    return f"{tool.name}({'; '.join(described)})"


def call_problem(call: ToolCallRequest, tools: Mapping[str, Tool]) -> str | None:
    """Why `call` cannot run, as a message for the model; None when it may run."""
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return f"unknown tool {call.name!r}; available tools: {known}. Call one of these."
    if call.arguments_error is not None:
        return (
            f"invalid arguments for {call.name}: {call.arguments_error}. Send the arguments "
            f"as one JSON object: {_signature(tool)}."
        )
    problems = schema_problems(call.arguments, tool.parameters)
    if problems:
        return (
            f"invalid arguments for {call.name}: {'; '.join(problems)}. "
            f"It takes {_signature(tool)}."
        )
    return None


class RepeatedCalls:
    """One turn's record of calls and results (by digest), to notice the model repeating
    itself. `stop_message` is set once a call was repeated `max_repeats` times."""

    def __init__(self, max_repeats: int = DEFAULT_MAX_REPEATED_CALLS) -> None:
        self.max_repeats = max_repeats
        self._seen: dict[bytes, int] = {}
        self.stop_message: str | None = None
        self.noted = False  # a result carried a note since the loop last cleared this

    def check(
        self, call: ToolCallRequest, output: ToolOutput, tool: Tool | None = None
    ) -> ToolOutput:
        """`output`, with a note for the model when this call and result happened before in
        this turn. Calls are compared normalized and results with their volatile parts masked
        (see acp_server/agent/no_progress.py)."""
        digest = hashlib.sha256(
            msgspec.json.encode(
                [call_key(call, tool), output.failed, stable_text(output.text)], order="sorted"
            )
        ).digest()
        repeats = self._seen.get(digest, -1) + 1
        self._seen[digest] = repeats
        if repeats == 0:
            return output
        self.noted = True
        arguments = msgspec.json.encode(call.arguments, order="sorted").decode()
        if len(arguments) > _EXCERPT:
            arguments = arguments[: _EXCERPT - 1] + "…"
        if repeats >= self.max_repeats and self.stop_message is None:
            self.stop_message = (
                f"Stopped: the same call {call.name}({arguments}) was made {repeats + 1} times "
                "in this turn with the same result each time. Send a new prompt to continue "
                "differently."
            )
            note = (
                f"\n\n[Note from acp-server: this call already returned this result {repeats} "
                f"time{'s' if repeats > 1 else ''} in this turn; the turn was stopped here.]"
            )
            return replace(output, text=output.text + note)
        note = (
            f"\n\n[Note from acp-server: this exact call already returned this exact result "
            f"{repeats} time{'s' if repeats > 1 else ''} in this turn. Repeating it will not "
            "change anything: try something else, or answer with what you know.]"
        )
        return replace(output, text=output.text + note)
