"""Token usage of a prompt turn, on the `session/prompt` response (`PromptResponse.usage`).

Newer than the stable schema we vendored (tests/data/acp/schema.json has no `usage`): checked
against `schema.unstable.json` (tests/protocol/test_newer.py). The shape is the one of
the End-Turn Token Usage RFD (agentclientprotocol.com/rfds/end-turn-token-usage): `totalTokens`,
`inputTokens`, `outputTokens` required; `thoughtTokens`, `cachedReadTokens`,
`cachedWriteTokens` optional and nullable (omitted and null both mean "not reported").
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .session import StopReason

__all__ = ["PromptResponse", "Usage"]


class Usage(Wire, frozen=True, kw_only=True):
    """Tokens the completed (or cancelled) turn used, summed over its model requests."""

    total_tokens: int
    input_tokens: int
    output_tokens: int
    thought_tokens: int | UnsetType | None = UNSET
    cached_read_tokens: int | UnsetType | None = UNSET
    cached_write_tokens: int | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PromptResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/prompt` with the turn's `usage` (`acp_protocol.session.PromptResponse`
    is the stable schema's, without it)."""

    stop_reason: StopReason
    usage: Usage | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
