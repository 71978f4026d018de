"""Wire types of the unstable ACP schema that this agent implements: `session/fork`.

Kept apart from the stable types, which are checked against the stable schema; these are
checked against `schema.unstable.json` (tests/protocol/test_unstable.py).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .mcp import McpServer
from .session_config import SessionConfigOption, SessionModeState
from .system_prompt import SystemPrompt, SystemPromptSessionCapabilities

__all__ = [
    "ForkSessionRequest",
    "ForkSessionResponse",
    "ForkingSessionCapabilities",
    "SessionForkCapabilities",
]


class SessionForkCapabilities(Wire, frozen=True, kw_only=True):
    """`sessionCapabilities.fork`: `{}` = `session/fork` is supported."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ForkingSessionCapabilities(SystemPromptSessionCapabilities, frozen=True, kw_only=True):
    """The stable session capabilities plus `systemPrompt` and the unstable schema's `fork`."""

    fork: SessionForkCapabilities | UnsetType | None = UNSET


class ForkSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/fork`: a new session from an existing one's history."""

    session_id: str
    cwd: str
    mcp_servers: list[McpServer] | UnsetType = UNSET
    additional_directories: list[str] | UnsetType = UNSET
    system_prompt: SystemPrompt | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ForkSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/fork`: the new session, active at once."""

    session_id: str
    modes: SessionModeState | UnsetType | None = UNSET
    config_options: list[SessionConfigOption] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
