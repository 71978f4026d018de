"""The stable types widened by the newer ones a client can opt into: its capabilities
(`plan`, `subagents`) and the session updates only such a client gets.

`NewerClientCapabilities` is the stable `ClientCapabilities` plus the unstable schema's
`plan` and `subagents`; `initialize` is decoded with it, so a client that sends them is heard
and one that does not sees the stable behaviour. `NewSessionWithPrompt`, `LoadSessionWithPrompt`
and `ResumeSessionWithPrompt` are the stable lifecycle requests plus `systemPrompt`
(acp_protocol/system_prompt.py), so their params decode once, whole.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .initialize import ClientCapabilities, InitializeRequest
from .plan_operations import PlanCapabilities, PlanRemoved, PlanUpdate
from .session import LoadSessionRequest, NewSessionRequest, ResumeSessionRequest
from .session_update import SessionUpdate
from .subagents import LinkedToolCallUpdate, SubagentUpdate
from .system_prompt import SystemPrompt

__all__ = [
    "LinkingSessionNotification",
    "LoadSessionWithPrompt",
    "NewSessionWithPrompt",
    "NewerClientCapabilities",
    "NewerInitializeRequest",
    "NewerSessionNotification",
    "NewerSessionUpdate",
    "ResumeSessionWithPrompt",
    "SubagentCapabilities",
]


class SubagentCapabilities(Wire, frozen=True, kw_only=True):
    """`clientCapabilities.subagents`: `{}` = the client registers child sessions."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class NewerClientCapabilities(ClientCapabilities, frozen=True, kw_only=True):
    """What the client supports, with the opt-ins of the newer surface."""

    plan: PlanCapabilities | UnsetType | None = UNSET
    subagents: SubagentCapabilities | UnsetType | None = UNSET


class NewerInitializeRequest(InitializeRequest, frozen=True, kw_only=True):
    """Params of `initialize`, hearing the newer client capabilities."""

    client_capabilities: NewerClientCapabilities = msgspec.field(
        default_factory=NewerClientCapabilities
    )


class NewSessionWithPrompt(NewSessionRequest, frozen=True, kw_only=True):
    """Params of `session/new` with the client's `systemPrompt`."""

    system_prompt: SystemPrompt | UnsetType | None = UNSET


class LoadSessionWithPrompt(LoadSessionRequest, frozen=True, kw_only=True):
    """Params of `session/load` with the client's `systemPrompt`."""

    system_prompt: SystemPrompt | UnsetType | None = UNSET


class ResumeSessionWithPrompt(ResumeSessionRequest, frozen=True, kw_only=True):
    """Params of `session/resume` with the client's `systemPrompt`."""

    system_prompt: SystemPrompt | UnsetType | None = UNSET


NewerSessionUpdate: TypeAlias = SessionUpdate | PlanUpdate | PlanRemoved | SubagentUpdate
"""Every update we may send: the stable ones, and those of the opt-ins."""


class NewerSessionNotification(Wire, frozen=True, kw_only=True):
    """Params of `session/update` carrying any update we may send."""

    session_id: str
    update: NewerSessionUpdate
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LinkingSessionNotification(Wire, frozen=True, kw_only=True):
    """Params of `session/update` carrying a tool call update with `session` content (a
    union cannot hold two `tool_call_update` variants)."""

    session_id: str
    update: LinkedToolCallUpdate
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
