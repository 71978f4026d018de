"""Recognising a server's "the context is exceeded" answer, in any of the shapes seen.

- OpenAI: `error.code` `context_length_exceeded`, "This model's maximum context length is N
  tokens. However, your messages resulted in M tokens."
- llama.cpp's server: `error.type` `exceed_context_size_error`, with `n_prompt_tokens` and
  `n_ctx` beside the message.
- vLLM: "This model's maximum context length is N tokens. However, you requested M tokens
  (...)" (newer versions: "your request has M input tokens").
- Anthropic: "prompt is too long: M tokens > N maximum".

`context_overflow` turns such a body into `ContextWindowExceeded` (carrying the sizes the
server gave), or None for every other error.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from acp_server.models.base import ContextWindowExceeded

__all__ = ["context_overflow", "overflow_from_error"]

_MARKERS = re.compile(
    r"context_length_exceeded|exceed_context_size_error|maximum context length"
    r"|prompt is too long|exceeds the available context size|context window exceeded",
    re.IGNORECASE,
)
_WINDOW = (
    re.compile(r"maximum context length is (\d+)", re.IGNORECASE),
    re.compile(r"> (\d+) maximum", re.IGNORECASE),
    re.compile(r"context size of (\d+)", re.IGNORECASE),
)
_REQUEST = (
    re.compile(r"prompt is too long: (\d+) tokens", re.IGNORECASE),
    re.compile(r"resulted in (\d+) tokens", re.IGNORECASE),
    re.compile(r"requested (\d+) tokens", re.IGNORECASE),
    re.compile(r"has (\d+) input tokens", re.IGNORECASE),
)
_SAID_CHARS = 300


def _number(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match is not None:
            return int(match[1])
    return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def overflow_from_error(label: str, error: Any) -> ContextWindowExceeded | None:
    """`error` (the `error` member of a decoded body or stream chunk, or a whole body) as a
    ContextWindowExceeded, or None when it is about something else."""
    fields: dict[str, Any] = {}
    if isinstance(error, dict):
        fields.update(error)
        inner = error.get("error")  # a whole body: the details are one level down
        if isinstance(inner, dict):
            fields.update(inner)
        elif isinstance(inner, str):
            fields["message"] = inner
    elif isinstance(error, str):
        fields["message"] = error
    message = fields.get("message")
    text = message if isinstance(message, str) else ""
    tags = " ".join(str(fields.get(key, "")) for key in ("code", "type"))
    if not _MARKERS.search(f"{tags} {text}"):
        return None
    said = re.sub(r"\s+", " ", text).strip()[:_SAID_CHARS]
    return ContextWindowExceeded(
        label,
        request_tokens=_count(fields.get("n_prompt_tokens")) or _number(_REQUEST, text),
        window=_count(fields.get("n_ctx")) or _number(_WINDOW, text),
        server_said=said,
    )


def context_overflow(label: str, status: int, body: bytes) -> ContextWindowExceeded | None:
    """An HTTP error answer as a ContextWindowExceeded, or None (see the module docstring)."""
    if status not in (400, 413, 422):
        return None
    try:
        decoded: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        decoded = body.decode("utf-8", errors="replace")
    return overflow_from_error(label, decoded)
