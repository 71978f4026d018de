"""v2 `session/update`: `UpdateSessionNotification` and the `SessionUpdate` variants (tagged by
`sessionUpdate`).

Messages are upserts by `message_id` (required on chunks too): a whole-message update with
`content` replaces what the message holds, chunks append. The turn's end is a `state_update`
with `state: idle` and its stop reason, not the prompt's answer. Variants v2 did not reshape
(session info, usage, notices, compactions, plan updates) are v1's Structs.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from ..base import Wire
from ..content import ContentBlock
from ..jsonrpc import ErrorObject
from ..plan_operations import PlanItems, PlanUpdate
from ..session_update import (
    CompactionSummaryChunk,
    CompactionUpdate,
    Notice,
    PlanEntry,
    SessionInfoUpdate,
    UsageUpdate,
)
from .config import SessionConfigOption
from .tool_call import (
    BackgroundWork,
    TerminalOutputChunk,
    TerminalUpdate,
    ToolCallContentChunk,
    ToolCallUpdate,
)

__all__ = [
    "AgentMessage",
    "AgentMessageChunk",
    "AgentThought",
    "AgentThoughtChunk",
    "AvailableCommand",
    "AvailableCommandsUpdate",
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "ConfigOptionUpdate",
    "ForegroundState",
    "Notice",
    "PlanEntry",
    "PlanItems",
    "PlanUpdate",
    "ReplayComplete",
    "SessionInfoUpdate",
    "SessionUpdate",
    "StateUpdate",
    "StopReason",
    "TextCommandInput",
    "UpdateSessionNotification",
    "UsageUpdate",
    "UserMessage",
    "UserMessageChunk",
]

Meta = dict[str, Any] | UnsetType | None

StopReason: TypeAlias = (
    Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"] | str
)
ForegroundState: TypeAlias = Literal["running", "requires_action", "idle"]


class _ContentChunk(Wire, frozen=True, kw_only=True):
    """Fields of the schema's `ContentChunk`: one block appended to the message `message_id`."""

    message_id: str
    content: ContentBlock
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class UserMessageChunk(
    _ContentChunk, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="user_message_chunk"
):
    """A piece of a user message."""


class AgentMessageChunk(
    _ContentChunk, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="agent_message_chunk"
):
    """A piece of the agent's answer."""


class AgentThoughtChunk(
    _ContentChunk, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="agent_thought_chunk"
):
    """A piece of the agent's reasoning."""


class _WholeMessage(Wire, frozen=True, kw_only=True):
    """Fields of the schema's `UserMessage`/`AgentMessage`/`AgentThought`: `content` UNSET
    leaves the message as it is, `None` or `[]` empties it, a list replaces it."""

    message_id: str
    content: list[ContentBlock] | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class UserMessage(
    _WholeMessage, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="user_message"
):
    """Creates or replaces a user message (a prompt's echo carries the prompt's `messageId`)."""


class AgentMessage(
    _WholeMessage, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="agent_message"
):
    """Creates or replaces an agent message."""


class AgentThought(
    _WholeMessage, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="agent_thought"
):
    """Creates or replaces an agent thought."""


# One Struct for the schema's `RunningStateUpdate | IdleStateUpdate | RequiresActionStateUpdate`
# (tagged by `state`, inside a variant already tagged by `sessionUpdate`: msgspec has one tag
# per Struct). Only `idle` carries a stop reason, and only an `error` stop its `error`.
class StateUpdate(Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="state_update"):
    """The session's foreground state. `background` UNSET: not reported (issue 33 reports it)."""

    state: ForegroundState | str
    stop_reason: StopReason | UnsetType | None = UNSET
    error: ErrorObject | UnsetType | None = UNSET
    background: list[BackgroundWork] | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.state != "idle" and self.stop_reason is not UNSET:
            raise ValueError("only an idle state has a stop reason")
        if self.error is not UNSET and self.stop_reason != "error":
            raise ValueError("only an `error` stop has an `error`")


class TextCommandInput(Wire, frozen=True, kw_only=True, tag_field="type", tag="text"):
    """Free-form command input; `hint` is shown while the user has typed none."""

    hint: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class AvailableCommand(Wire, frozen=True, kw_only=True, tag_field="type", tag="command"):
    """A slash command (sent as prompt text `/name args`)."""

    name: str
    description: str
    input: TextCommandInput | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class AvailableCommandsUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="available_commands_update"
):
    """The complete list of commands (it replaces the previous one)."""

    available_commands: list[AvailableCommand]
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ConfigOptionUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="config_option_update"
):
    """The complete list of config options, after some changed (a mode change included)."""

    config_options: list[SessionConfigOption]
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ReplayComplete(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="replay_complete"
):
    """Sent once after a `session/resume` replay, before the state snapshot and the answer.

    Newer than the 2.4.0 schema, which knows it only as an unknown variant: the spec's
    rfds/v2/session-replay-complete and the Rust schema's `ReplayComplete` (only `_meta`)."""

    meta: Meta = msgspec.field(default=UNSET, name="_meta")


SessionUpdate: TypeAlias = (
    UserMessageChunk
    | UserMessage
    | AgentMessageChunk
    | AgentMessage
    | AgentThoughtChunk
    | AgentThought
    | StateUpdate
    | ToolCallContentChunk
    | ToolCallUpdate
    | TerminalUpdate
    | TerminalOutputChunk
    | PlanUpdate
    | AvailableCommandsUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | Notice
    | CompactionUpdate
    | CompactionSummaryChunk
    | ReplayComplete
)


class UpdateSessionNotification(Wire, frozen=True, kw_only=True):
    """Params of the v2 `session/update` notification."""

    session_id: str
    update: SessionUpdate
    meta: Meta = msgspec.field(default=UNSET, name="_meta")
