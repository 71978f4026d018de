"""Tool calls: the `tool_call` / `tool_call_update` session updates and their parts."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .content import ContentBlock

__all__ = [
    "ContentToolCallContent",
    "DiffToolCallContent",
    "TerminalToolCallContent",
    "ToolCall",
    "ToolCallContent",
    "ToolCallLocation",
    "ToolCallStatus",
    "ToolCallUpdate",
    "ToolCallUpdateFields",
    "ToolKind",
]

ToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolCallStatus: TypeAlias = Literal["pending", "in_progress", "completed", "failed"]


class ContentToolCallContent(Wire, frozen=True, kw_only=True, tag_field="type", tag="content"):
    """Tool call content: a regular content block (schema def `Content`)."""

    content: ContentBlock
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class DiffToolCallContent(Wire, frozen=True, kw_only=True, tag_field="type", tag="diff"):
    """Tool call content: a file modification (schema def `Diff`). `old_text` None = new file."""

    path: str
    new_text: str
    old_text: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalToolCallContent(Wire, frozen=True, kw_only=True, tag_field="type", tag="terminal"):
    """Tool call content: a live terminal created by `terminal/create` (schema def `Terminal`)."""

    terminal_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


ToolCallContent: TypeAlias = ContentToolCallContent | DiffToolCallContent | TerminalToolCallContent


class ToolCallLocation(Wire, frozen=True, kw_only=True):
    """A file (and optionally a 1-based line) a tool call is working on."""

    path: str
    line: int | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCall(Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="tool_call"):
    """Session update announcing a new tool call."""

    tool_call_id: str
    title: str
    name: str | UnsetType | None = UNSET
    kind: ToolKind | UnsetType = UNSET
    status: ToolCallStatus | UnsetType = UNSET
    content: list[ToolCallContent] | UnsetType = UNSET
    locations: list[ToolCallLocation] | UnsetType = UNSET
    raw_input: Any = UNSET
    raw_output: Any = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class _ToolCallPatch(Wire, frozen=True, kw_only=True):
    """Fields of the schema's `ToolCallUpdate`: only `tool_call_id` is required.

    Every other field is `UNSET` (not sent: unchanged) or a value; `None` is sent as `null`.
    `content` and `locations` replace the previous lists.
    """

    tool_call_id: str
    title: str | UnsetType | None = UNSET
    name: str | UnsetType | None = UNSET
    kind: ToolKind | UnsetType | None = UNSET
    status: ToolCallStatus | UnsetType | None = UNSET
    content: list[ToolCallContent] | UnsetType | None = UNSET
    locations: list[ToolCallLocation] | UnsetType | None = UNSET
    raw_input: Any = UNSET
    raw_output: Any = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ToolCallUpdate(
    _ToolCallPatch, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="tool_call_update"
):
    """Session update changing some fields of an announced tool call."""


class ToolCallUpdateFields(_ToolCallPatch, frozen=True, kw_only=True):
    """The untagged `ToolCallUpdate` shape, as in `session/request_permission`'s `toolCall`.

    A sibling of `ToolCallUpdate` (not a base class), so that a session-update variant, whose
    encoding carries `sessionUpdate`, cannot be passed where this shape is expected.
    """
