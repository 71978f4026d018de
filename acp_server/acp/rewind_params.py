"""The params of the `_session/rewind` extension (acp/rewind.py), apart from its handler so
the connection's route table can name their type without importing the runtime."""

from __future__ import annotations

from typing import Any

import msgspec


class HistoryPoint(msgspec.Struct, rename="camel"):
    """A message of the conversation as an AIR client names it."""

    message_id: str | None = None
    message_fingerprint: str | None = None
    message_occurrence: int = msgspec.field(default=1)


class RewindRequest(msgspec.Struct, rename="camel"):
    """`_session/rewind` params (unknown fields, such as `interruptIfRunning`, are ignored)."""

    session_id: str
    before_message: HistoryPoint
    resume_at_message: HistoryPoint | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")
