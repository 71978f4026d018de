"""The `_session/rewind` extension: the AIR session-rewind contract that the Claude and Codex ACP
adapters implement, served by acp_server/acp/rewind.py.

Not part of either ACP schema (an `_`-prefixed method is an extension by ACP's rule), so these
Structs are plain msgspec ones rather than `Wire` types checked against a schema.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["HistoryPoint", "RewindRequest", "RewindResponse"]


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


class RewindResponse(msgspec.Struct, rename="camel"):
    """`_session/rewind` result: `{"rewound": true}`, with what happened to the files under
    `_meta["acp-server"]`."""

    rewound: bool
    meta: dict[str, Any] = msgspec.field(name="_meta")
