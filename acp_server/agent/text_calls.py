"""Tool calls a model wrote as text, recognised and run as calls.

Some local models, served with a chat template that does not parse their tool-call format,
write the call into the message: Qwen2.5-Coder under llama.cpp writes a fenced JSON block or
`<tool_call>` tags. Without this the turn ends with that JSON as the answer.

A message is a call only when *all* of it (surrounding whitespace aside) is exactly one of:

- a JSON object;
- one fenced code block (```` ``` ```` or ```` ```json ````) holding a JSON object;
- one `<tool_call>...</tool_call>` holding a JSON object;

and that object names an offered tool in `name` and gives its arguments as an object in
`arguments` (or `parameters`; a JSON string holding an object is accepted too), with no other
keys. Anything else (prose around the JSON, two objects, an unknown tool, a JSON answer the
user asked for that does not have exactly this shape) stays text. The risks are in
docs/rfc/implemented/feature/2026-12-01-text-tool-calls.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["TextCall", "reads_text_calls", "text_call"]

_FENCED = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?```\Z", re.DOTALL)
_TAGGED = re.compile(r"\A<tool_call>(?P<body>.*?)</tool_call>\Z", re.DOTALL)
_MAX_CHARS = 1_000_000


class TextCall(msgspec.Struct, frozen=True):
    """A recognised call: the tool's name and its arguments."""

    name: str
    arguments: dict[str, Any]


def _object(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, dict) else None


def text_call(message: str, offered: Mapping[str, object]) -> TextCall | None:
    """The call `message` consists of, or None when it is not one (see the module docstring).
    `offered` holds the names of the tools offered in the request."""
    text = message.strip()
    if not text or len(text) > _MAX_CHARS:
        return None
    body = text
    for form in (_FENCED, _TAGGED):
        match = form.match(text)
        if match is not None:
            body = match["body"]
            break
    found = _object(body)
    if found is None:
        return None
    name = found.get("name")
    keys = set(found) - {"name"}
    if not isinstance(name, str) or name not in offered or len(keys) != 1:
        return None
    (key,) = keys
    if key not in ("arguments", "parameters"):
        return None
    arguments = found[key]
    if isinstance(arguments, str):
        arguments = _object(arguments)
    if not isinstance(arguments, dict):
        return None
    return TextCall(name, arguments)


def reads_text_calls(model: object) -> bool:
    """Whether text tool calls of `model` are recognised: its `text_tool_calls` attribute (set
    from the config, default on for OpenAI-compatible servers other than OpenAI's)."""
    return getattr(model, "text_tool_calls", False) is True
