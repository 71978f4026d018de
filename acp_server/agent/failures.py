"""What a failed turn keeps: a coarse durable error, and the full text for the client and log.

Durable records outlive the process and are replayed to every later client. A provider's
error text (server error bodies, excerpts of malformed chunks) is hostile input and may echo
a key, so `turn/end` gets one fixed message and a short code, and the full text goes only to
the prompt's JSON-RPC error and the log, redacted. See
docs/rfc/implemented/architecture/2026-11-30-session-journal.md.
"""

from __future__ import annotations

import os
import re

from acp_server.models.base import ModelError
from acp_server.session.records import ErrorOutcome

MODEL_FAILED = "the model provider failed"
"""The durable message of every model failure; the code says which kind."""

_CODE = re.compile(r"[a-z0-9_]{1,40}")
"""Codes we make up (`http_502`, `timeout`, `malformed_chunk`); a provider's own error type
that does not look like one is not kept."""

_SECRET_ENV = re.compile(r".*_(API_KEY|KEY|TOKEN|SECRET)$")
_SECRET_TEXT = (
    (re.compile(r"(?i)\b(bearer\s+)[\w.~+/=-]{8,}"), r"\1[redacted]"),
    (
        re.compile(
            r"(?i)\b((?:x-)?api[_-]?key|token|secret|password)"  # the name, then
            r"([\"']?\s*[:=]\s*[\"']?)[\w.~+/=-]{4,}"  # `: "` or `=`, then the value
        ),
        r"\1\2[redacted]",
    ),
    (re.compile(r"\b(sk-)[\w-]{8,}"), r"\1[redacted]"),
)


def durable_error(error: ModelError) -> ErrorOutcome:
    """The `turn/end` outcome of a model failure: no provider text, only our kind of code."""
    code = error.code if error.code is not None and _CODE.fullmatch(error.code) else "model_error"
    return ErrorOutcome(message=MODEL_FAILED, code=code)


def redact(text: str) -> str:
    """`text` with secrets masked: the values of key-like environment variables, bearer
    tokens, `api_key=...`-style pairs and `sk-...` keys."""
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_ENV.fullmatch(name) and value in text:
            text = text.replace(value, "[redacted]")
    for pattern, replacement in _SECRET_TEXT:
        text = pattern.sub(replacement, text)
    return text
