"""Tool calls a model wrote as text, recognised and run as calls.

Some local models, served with a chat template that does not parse their tool-call format,
write the call into the message: Qwen2.5-Coder under llama.cpp writes a fenced JSON block or
`<tool_call>` tags, and sometimes two calls in one message. Without this the turn ends with
that JSON as the answer.

A message is a sequence of calls only when *all* of it is, item after item with only
whitespace between them, at most `MAX_CALLS` of:

- a JSON object;
- a fenced code block (```` ``` ```` or ```` ```json ````) holding one or more JSON objects;
- a `<tool_call>...</tool_call>` holding one or more JSON objects;

and every object names an offered tool in `name` and gives its arguments as an object in
`arguments` (or `parameters`; a JSON string holding an object is accepted too), with no other
keys. Anything else (prose anywhere, an object that is not such a call, an unknown tool, a JSON
answer the user asked for that does not have exactly this shape) leaves the whole message text.
The risks are in docs/rfc/implemented/feature/2026-12-01-text-tool-calls.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["MAX_CALLS", "TextCall", "reads_text_calls", "text_calls"]

MAX_CALLS = 16
"""More calls than this in one message: the message stays text."""

_FENCED = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>(?P<body>.*?)</tool_call>", re.DOTALL)
_MAX_CHARS = 1_000_000
_DECODER = json.JSONDecoder()


class TextCall(msgspec.Struct, frozen=True):
    """A recognised call: the tool's name and its arguments."""

    name: str
    arguments: dict[str, Any]


def _skip(text: str, at: int) -> int:
    """The first index at or after `at` that is not whitespace."""
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _object_at(text: str, at: int) -> tuple[Any, int] | None:
    """The JSON object starting at `at` and the index after it, or None."""
    if text[at] != "{":
        return None
    try:
        return _DECODER.raw_decode(text, at)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the stack
        return None


def _objects(text: str) -> list[Any] | None:
    """The JSON objects `text` consists of (whitespace between them), or None."""
    found: list[Any] = []
    at = _skip(text, 0)
    while at < len(text):
        decoded = _object_at(text, at)
        if decoded is None or len(found) >= MAX_CALLS:
            return None
        found.append(decoded[0])
        at = _skip(text, decoded[1])
    return found


def _items(text: str) -> list[Any] | None:
    """The JSON values of the message's items (see the module docstring), or None."""
    found: list[Any] = []
    at = _skip(text, 0)
    while at < len(text):
        block = _FENCED.match(text, at) or _TAGGED.match(text, at)
        if block is not None:
            inner = _objects(block["body"])
            if not inner:
                return None
            found.extend(inner)
            at = block.end()
        else:
            decoded = _object_at(text, at)
            if decoded is None:
                return None
            found.append(decoded[0])
            at = decoded[1]
        if len(found) > MAX_CALLS:
            return None
        at = _skip(text, at)
    return found


def _call(value: Any, offered: Mapping[str, object]) -> TextCall | None:
    if not isinstance(value, dict):
        return None
    name = value.get("name")
    keys = set(value) - {"name"}
    if not isinstance(name, str) or name not in offered or len(keys) != 1:
        return None
    (key,) = keys
    if key not in ("arguments", "parameters"):
        return None
    arguments = value[key]
    if isinstance(arguments, str):
        inner = _objects(arguments)
        arguments = inner[0] if inner is not None and len(inner) == 1 else None
    if not isinstance(arguments, dict):
        return None
    return TextCall(name, arguments)


def text_calls(message: str, offered: Mapping[str, object]) -> list[TextCall]:
    """The calls `message` consists of, in order; empty when it is not only calls (see the
    module docstring). `offered` holds the names of the tools offered in the request."""
    if len(message) > _MAX_CHARS:
        return []
    values = _items(message)
    if not values:
        return []
    calls = [_call(value, offered) for value in values]
    return [call for call in calls if call is not None] if None not in calls else []


def reads_text_calls(model: object) -> bool:
    """Whether text tool calls of `model` are recognised: its `text_tool_calls` attribute (set
    from the config, default on for OpenAI-compatible servers other than OpenAI's)."""
    return getattr(model, "text_tool_calls", False) is True
