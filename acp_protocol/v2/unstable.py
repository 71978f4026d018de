"""v2 types of the unstable schema this agent implements: `session/fork`, and the client's
`systemPrompt` on new, resume and fork with its capability. Checked against
`schema.unstable.json` (the v2 pair's), as v1's unstable types are against v1's."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..base import Wire
from ..system_prompt import SessionSystemPromptCapabilities, SystemPrompt
from ..unstable import SessionForkCapabilities
from .config import SessionConfigOption
from .initialize import SessionCapabilities
from .session import McpServer, NewSessionRequest, ResumeSessionRequest
from .session_update import AvailableCommand

__all__ = [
    "ForkSessionRequest",
    "ForkSessionResponse",
    "ForkingSessionCapabilities",
    "NewSessionWithPrompt",
    "ResumeSessionWithPrompt",
]


class ForkingSessionCapabilities(SessionCapabilities, frozen=True, kw_only=True):
    """The stable session capabilities plus the unstable `fork` and `systemPrompt`."""

    system_prompt: SessionSystemPromptCapabilities | UnsetType | None = UNSET
    fork: SessionForkCapabilities | UnsetType | None = UNSET


class NewSessionWithPrompt(NewSessionRequest, frozen=True, kw_only=True):
    """Params of `session/new` with the client's `systemPrompt`."""

    system_prompt: SystemPrompt | UnsetType | None = UNSET


class ResumeSessionWithPrompt(ResumeSessionRequest, frozen=True, kw_only=True):
    """Params of `session/resume` with the client's `systemPrompt`."""

    system_prompt: SystemPrompt | UnsetType | None = UNSET


class ForkSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/fork`: a new session from an existing one's history."""

    session_id: str
    cwd: str
    additional_directories: list[str] | UnsetType = UNSET
    mcp_servers: list[McpServer] | UnsetType = UNSET
    system_prompt: SystemPrompt | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ForkSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/fork`: the new session, active at once."""

    session_id: str
    config_options: list[SessionConfigOption] | UnsetType = UNSET
    available_commands: list[AvailableCommand] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
