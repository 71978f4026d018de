"""Client-provided system prompts: `systemPrompt` on `session/new`, `session/load`,
`session/resume` and `session/fork`, advertised by `sessionCapabilities.systemPrompt`.

Newer than the stable schema we vendored: checked against `schema.unstable.json` (its
`SystemPrompt`, `SessionSystemPrompt*Capabilities`; tests/protocol/test_newer.py).
Stabilized in ACP v1 on 2026-11-06 (agentclientprotocol.com/announcements/
client-system-prompt-stabilized; protocol/v1/session-setup#system-prompt): `mode` is required
(`append`, or `override` where advertised; any other is an error), `content` holds text blocks
(other block types are an error), and an empty `content` may be refused with -32602.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .content import ContentBlock
from .initialize import SessionCapabilities

__all__ = [
    "SessionSystemPromptCapabilities",
    "SessionSystemPromptModeCapabilities",
    "SessionSystemPromptOverrideCapabilities",
    "SystemPrompt",
    "SystemPromptParams",
    "SystemPromptSessionCapabilities",
]


class SessionSystemPromptOverrideCapabilities(Wire, frozen=True, kw_only=True):
    """`{}`: the agent can replace its built-in instructions with the client's."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionSystemPromptModeCapabilities(Wire, frozen=True, kw_only=True):
    """Modes supported besides `append` (which every advertising agent supports)."""

    override: SessionSystemPromptOverrideCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionSystemPromptCapabilities(Wire, frozen=True, kw_only=True):
    """`sessionCapabilities.systemPrompt`: `{}` = `append` only; `mode` lists the others."""

    mode: SessionSystemPromptModeCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SystemPromptSessionCapabilities(SessionCapabilities, frozen=True, kw_only=True):
    """The stable session capabilities plus `systemPrompt`."""

    system_prompt: SessionSystemPromptCapabilities | UnsetType | None = UNSET


class SystemPrompt(Wire, frozen=True, kw_only=True):
    """Client-provided system-level instructions for a session. `mode` is a string, not a
    closed literal: an unknown mode must be answered with an error, not a decode failure that
    could be mistaken for a malformed request elsewhere."""

    mode: str
    content: list[ContentBlock]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SystemPromptParams(Wire, frozen=True, kw_only=True):
    """The `systemPrompt` member of any session lifecycle request's params (decoded beside the
    stable request type, which predates it)."""

    system_prompt: SystemPrompt | UnsetType | None = UNSET
