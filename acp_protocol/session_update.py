"""`session/update` notifications: `SessionNotification` and the `SessionUpdate` variants
(tagged by `sessionUpdate`)."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .content import ContentBlock
from .session_config import SessionConfigOption
from .tool_call import ToolCall, ToolCallUpdate

__all__ = [
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "AvailableCommand",
    "AvailableCommandInput",
    "AvailableCommandsUpdate",
    "CompactionStatus",
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "ConfigOptionUpdate",
    "Cost",
    "CurrentModeUpdate",
    "Notice",
    "NoticeSeverity",
    "Plan",
    "PlanEntry",
    "PlanEntryPriority",
    "PlanEntryStatus",
    "SessionInfoUpdate",
    "SessionNotification",
    "SessionUpdate",
    "ToolCall",
    "ToolCallUpdate",
    "UnstructuredCommandInput",
    "UsageUpdate",
    "UserMessageChunk",
]

PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"]
PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
NoticeSeverity: TypeAlias = Literal["info", "warning", "error"] | str
"""Open set: clients must tolerate unknown severities (custom ones start with `_`)."""
CompactionStatus: TypeAlias = Literal["in_progress", "completed", "failed", "cancelled"] | str
"""Open set: clients must tolerate unknown statuses (custom ones start with `_`)."""


class _ContentChunk(Wire, frozen=True, kw_only=True):
    """Fields of the schema's `ContentChunk`. Chunks with the same `message_id` form a message."""

    content: ContentBlock
    message_id: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class UserMessageChunk(
    _ContentChunk, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="user_message_chunk"
):
    """A piece of a user message (mostly for history replay in `session/load`)."""


class AgentMessageChunk(
    _ContentChunk, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="agent_message_chunk"
):
    """A piece of the agent's response."""


class AgentThoughtChunk(
    _ContentChunk, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="agent_thought_chunk"
):
    """A piece of the agent's reasoning."""


class PlanEntry(Wire, frozen=True, kw_only=True):
    """One task of the agent's plan."""

    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class Plan(Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="plan"):
    """The complete plan; it replaces the previous one."""

    entries: list[PlanEntry]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class UnstructuredCommandInput(Wire, frozen=True, kw_only=True):
    """Free-form command input; `hint` is shown when the user has not typed any yet."""

    hint: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


AvailableCommandInput: TypeAlias = UnstructuredCommandInput
"""The schema's `AvailableCommandInput` union, which has a single variant in v1."""


class AvailableCommand(Wire, frozen=True, kw_only=True):
    """A slash command the user can run (sent to the agent as prompt text `/name args`)."""

    name: str
    description: str
    input: AvailableCommandInput | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AvailableCommandsUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="available_commands_update"
):
    """The complete list of available commands."""

    available_commands: list[AvailableCommand]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CurrentModeUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="current_mode_update"
):
    """The agent switched to another mode."""

    current_mode_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ConfigOptionUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="config_option_update"
):
    """The complete list of config options, after the agent changed some."""

    config_options: list[SessionConfigOption]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionInfoUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="session_info_update"
):
    """Changed session metadata: `UNSET` = unchanged, `None` = cleared."""

    title: str | UnsetType | None = UNSET
    updated_at: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class Cost(Wire, frozen=True, kw_only=True):
    """A cumulative session cost; `currency` is an ISO 4217 code."""

    amount: float
    currency: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class UsageUpdate(Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="usage_update"):
    """Context window usage: `used` tokens out of `size`."""

    used: int
    size: int
    cost: Cost | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class Notice(Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="notice"):
    """A live, fire-and-forget message for the user (only if the client advertised
    `session.notices`). `title` must not be empty."""

    severity: NoticeSeverity
    title: str
    description: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if not self.title:
            raise ValueError("a notice needs a non-empty `title`")


class CompactionUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="compaction_update"
):
    """Creates or patches the compaction `compaction_id` (only if the client advertised
    `session.compaction`). The first update fixes its place in the timeline; later ones patch
    it: `UNSET` leaves a field unchanged, `None` clears it."""

    compaction_id: str
    status: CompactionStatus
    summary: list[ContentBlock] | UnsetType | None = UNSET
    error: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CompactionSummaryChunk(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="compaction_summary_chunk"
):
    """One content block appended to a compaction's summary (a new id starts an in-progress
    compaction)."""

    compaction_id: str
    content: ContentBlock
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


SessionUpdate: TypeAlias = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCall
    | ToolCallUpdate
    | Plan
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | Notice
    | CompactionUpdate
    | CompactionSummaryChunk
)


class SessionNotification(Wire, frozen=True, kw_only=True):
    """Params of the `session/update` notification."""

    session_id: str
    update: SessionUpdate
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
