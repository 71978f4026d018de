"""What a failed turn keeps: a coarse durable error; the full text goes to the client and log.

Durable records outlive the process and are replayed to every later client. A provider's
error text (server error bodies, excerpts of malformed chunks) is hostile input and may echo
a key, so `turn/end` gets one fixed message and a short code of ours, and the full text goes
only to the prompt's JSON-RPC error and the log, through `acp_server.redaction.redact`. See
docs/rfc/implemented/architecture/2026-11-30-session-journal.md.
"""

from __future__ import annotations

import re

from acp_server.models.base import ModelError
from acp_server.session.records import ErrorOutcome

MODEL_FAILED = "the model provider failed"
"""The durable message of every model failure; the code says which kind."""

_CODE = re.compile(r"[a-z0-9_]{1,40}")
"""Codes we make up (`http_502`, `timeout`, `malformed_chunk`); a provider's own error type
that does not look like one is not kept."""


def durable_error(error: ModelError) -> ErrorOutcome:
    """The `turn/end` outcome of a model failure: no provider text, only our kind of code."""
    code = error.code if error.code is not None and _CODE.fullmatch(error.code) else "model_error"
    return ErrorOutcome(message=MODEL_FAILED, code=code)
