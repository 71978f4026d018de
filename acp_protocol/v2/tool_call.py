"""v2 tool calls: `tool_call_update` is the only tool-call update (its first sight of an id
creates the call), diffs are a change list with a git patch, and terminals are the agent's own,
shown through the display-only terminal surface (`terminal_update`, `terminal_output_chunk`).

Content items v2 did not reshape (`content`, `terminal`) are v1's Structs.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from ..base import Wire
from ..client import TerminalExitStatus
from ..tool_call import ContentToolCallContent, TerminalToolCallContent, ToolCallLocation, ToolKind

__all__ = [
    "BackgroundTerminal",
    "BackgroundToolCall",
    "BackgroundWork",
    "ContentToolCallContent",
    "Diff",
    "DiffChange",
    "DiffPatch",
    "TerminalCancelCapabilities",
    "TerminalCapabilities",
    "TerminalExitStatus",
    "TerminalOutput",
    "TerminalOutputChunk",
    "TerminalSize",
    "TerminalToolCallContent",
    "TerminalUpdate",
    "ToolCallCancelCapabilities",
    "ToolCallCapabilities",
    "ToolCallContent",
    "ToolCallContentChunk",
    "ToolCallStatus",
    "ToolCallUpdate",
    "ToolCallUpdateFields",
]

Meta = dict[str, Any] | UnsetType | None

ToolCallStatus: TypeAlias = (
    Literal["pending", "in_progress", "paused", "completed", "failed", "cancelled"] | str
)
"""Open set: an unknown status reads as in progress."""
DiffOperation: TypeAlias = Literal["add", "delete", "modify", "move", "copy"] | str
DiffFileType: TypeAlias = Literal["text", "binary", "directory", "symlink"] | str


# One Struct for the schema's `DiffChange` variants (tagged by `operation`): `add`, `delete` and
# `modify` name one `path`; `move` and `copy` also name the `old_path`.
class DiffChange(Wire, frozen=True, kw_only=True):
    """One file a diff changes (absolute paths)."""

    operation: DiffOperation
    path: str
    old_path: str | UnsetType = UNSET
    file_type: DiffFileType | UnsetType | None = UNSET
    mime_type: str | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.operation in ("move", "copy") and self.old_path is UNSET:
            raise ValueError(f"a {self.operation} change needs `oldPath`")
        if self.operation in ("add", "delete", "modify") and self.old_path is not UNSET:
            raise ValueError(f"a {self.operation} change has no `oldPath`")


class DiffPatch(Wire, frozen=True, kw_only=True):
    """The changes as Git `--patch` text with absolute paths and no commit metadata."""

    format: Literal["git_patch"] | str
    text: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class Diff(Wire, frozen=True, kw_only=True, tag_field="type", tag="diff"):
    """Tool call content: file changes; `patch`, when given, agrees with `changes`."""

    changes: list[DiffChange]
    patch: DiffPatch | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


ToolCallContent: TypeAlias = ContentToolCallContent | Diff | TerminalToolCallContent


class ToolCallCancelCapabilities(Wire, frozen=True, kw_only=True):
    """`{}`: the call can be stopped alone with `tool_call/cancel`."""

    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ToolCallCapabilities(Wire, frozen=True, kw_only=True):
    cancel: ToolCallCancelCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class _ToolCallPatch(Wire, frozen=True, kw_only=True):
    """Fields of the schema's `ToolCallUpdate`: an upsert by `tool_call_id`. `UNSET` (left out)
    leaves a field unchanged; `None` clears it (`kind` reads `other`, `status` `pending`); a
    list replaces the previous one."""

    tool_call_id: str
    name: str | UnsetType | None = UNSET
    title: str | UnsetType | None = UNSET
    kind: ToolKind | UnsetType | None = UNSET
    status: ToolCallStatus | UnsetType | None = UNSET
    content: list[ToolCallContent] | UnsetType | None = UNSET
    locations: list[ToolCallLocation] | UnsetType | None = UNSET
    raw_input: Any = UNSET
    raw_output: Any = UNSET
    capabilities: ToolCallCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ToolCallUpdate(
    _ToolCallPatch, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="tool_call_update"
):
    """Session update creating (first sight of the id) or patching a tool call."""


class ToolCallUpdateFields(_ToolCallPatch, frozen=True, kw_only=True):
    """The untagged `ToolCallUpdate` shape, as in a permission request's `tool_call` subject."""


class ToolCallContentChunk(
    Wire,
    frozen=True,
    kw_only=True,
    tag_field="sessionUpdate",
    tag="tool_call_content_chunk",
):
    """Appends one content item to a tool call."""

    tool_call_id: str
    content: ToolCallContent
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


# --- the display-only terminal ---------------------------------------------------------------


class TerminalOutput(Wire, frozen=True, kw_only=True):
    """The terminal's whole output so far (base64 bytes): a snapshot replacing what came before."""

    data: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class TerminalSize(Wire, frozen=True, kw_only=True):
    cols: int
    rows: int
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class TerminalCancelCapabilities(Wire, frozen=True, kw_only=True):
    """`{}`: the terminal's process can be stopped alone with `terminal/cancel`."""

    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class TerminalCapabilities(Wire, frozen=True, kw_only=True):
    cancel: TerminalCancelCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class TerminalUpdate(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="terminal_update"
):
    """Creates (first sight of the id) or patches an agent-owned, display-only terminal. An
    `exit_status` object means the process has exited."""

    terminal_id: str
    command: str | UnsetType | None = UNSET
    cwd: str | UnsetType | None = UNSET
    output: TerminalOutput | UnsetType | None = UNSET
    exit_status: TerminalExitStatus | UnsetType | None = UNSET
    size: TerminalSize | UnsetType | None = UNSET
    capabilities: TerminalCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class TerminalOutputChunk(
    Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="terminal_output_chunk"
):
    """Appends bytes (base64, decoded on their own) to a terminal's output."""

    terminal_id: str
    data: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


# --- background work (listed on state updates; issue 33) ------------------------------------


class BackgroundTerminal(Wire, frozen=True, kw_only=True, tag_field="type", tag="terminal"):
    """Work running independently of the foreground, shown as its terminal."""

    terminal_id: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class BackgroundToolCall(Wire, frozen=True, kw_only=True, tag_field="type", tag="tool_call"):
    """A tool call running independently of the foreground."""

    tool_call_id: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


BackgroundWork: TypeAlias = BackgroundTerminal | BackgroundToolCall
