"""Subagent sessions (ACP v1, stabilized 2026-11-20): a `task` child shown as a child session
to a client that advertised `clientCapabilities.subagents: {}`.

`subagent_update` on the parent session announces the child (before any of its traffic) and
reports its work state; the child's updates carry its own `sessionId`; the parent's tool call
links the child with `session` content; `capabilities.cancel` says `session/cancel` on the
child stops its current work. From agentclientprotocol.com/announcements/subagents-stabilized
and protocol/v1/subagents; checked against `schema.unstable.json` where it has the type
(`SubagentUpdate` there lacks `description`, and its `ToolCallContent` lacks `session`: those
two are checked against the docs' field lists, tests/data/acp/newer_fields.json).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .session import StopReason
from .tool_call import ToolCallContent, ToolCallLocation, ToolCallStatus

__all__ = [
    "IdleState",
    "LinkedToolCallUpdate",
    "RunningState",
    "SessionCancelCapabilities",
    "SessionToolCallContent",
    "SubagentSessionCapabilities",
    "SubagentUpdate",
]


class SessionCancelCapabilities(Wire, frozen=True, kw_only=True):
    """`{}`: `session/cancel` on the child stops its current work."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SubagentSessionCapabilities(Wire, frozen=True, kw_only=True):
    """What the client may do with the child session."""

    cancel: SessionCancelCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class RunningState(Wire, frozen=True, kw_only=True, tag_field="state", tag="running"):
    """The child's foreground work is in progress."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class IdleState(Wire, frozen=True, kw_only=True, tag_field="state", tag="idle"):
    """The child is ready for more work; `stop_reason` says how its last work ended."""

    stop_reason: StopReason
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SubagentUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="subagent_update"
):
    """On the parent session: announces (first time) or patches the child `session_id`."""

    session_id: str
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    capabilities: SubagentSessionCapabilities | UnsetType | None = UNSET
    state: RunningState | IdleState | UnsetType | None = UNSET
    cwd: str | UnsetType | None = UNSET
    additional_directories: list[str] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionToolCallContent(Wire, frozen=True, kw_only=True, tag_field="type", tag="session"):
    """Tool call content linking a (child) session."""

    session_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LinkedToolCallUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="tool_call_update"
):
    """A `tool_call_update` whose content may hold `session` items (the parent's `task` call
    linking its child); the fields a linked call's updates use."""

    tool_call_id: str
    status: ToolCallStatus | UnsetType | None = UNSET
    content: list[ToolCallContent | SessionToolCallContent] | UnsetType | None = UNSET
    locations: list[ToolCallLocation] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
