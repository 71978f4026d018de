"""Methods handled by the client (sent by the agent): permission requests, `fs/*` and
`terminal/*`. Elicitation lives in `acp_protocol.elicitation`."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .mcp import EnvVariable
from .tool_call import ToolCallUpdateFields

__all__ = [
    "CancelledPermissionOutcome",
    "CreateTerminalRequest",
    "CreateTerminalResponse",
    "KillTerminalRequest",
    "KillTerminalResponse",
    "PermissionOption",
    "PermissionOptionKind",
    "PermissionOutcome",
    "ReadTextFileRequest",
    "ReadTextFileResponse",
    "ReleaseTerminalRequest",
    "ReleaseTerminalResponse",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "SelectedPermissionOutcome",
    "TerminalExitStatus",
    "TerminalOutputRequest",
    "TerminalOutputResponse",
    "WaitForTerminalExitRequest",
    "WaitForTerminalExitResponse",
    "WriteTextFileRequest",
    "WriteTextFileResponse",
]

# --- session/request_permission --------------------------------------------------------------

PermissionOptionKind: TypeAlias = Literal[
    "allow_once", "allow_always", "reject_once", "reject_always"
]


class PermissionOption(Wire, frozen=True, kw_only=True):
    """A choice offered to the user; `kind` is a UI hint, map the answer by `option_id`."""

    option_id: str
    name: str
    kind: PermissionOptionKind
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/request_permission`. `tool_call` may hold only the `tool_call_id`."""

    session_id: str
    tool_call: ToolCallUpdateFields
    options: list[PermissionOption]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SelectedPermissionOutcome(
    Wire, frozen=True, kw_only=True, tag_field="outcome", tag="selected"
):
    """The user chose the option `option_id`."""

    option_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CancelledPermissionOutcome(
    Wire, frozen=True, kw_only=True, tag_field="outcome", tag="cancelled"
):
    """The prompt turn was cancelled before the user chose."""


PermissionOutcome: TypeAlias = SelectedPermissionOutcome | CancelledPermissionOutcome
RequestPermissionOutcome: TypeAlias = PermissionOutcome
"""The schema's name for `PermissionOutcome`."""


class RequestPermissionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/request_permission`."""

    outcome: PermissionOutcome
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# --- fs/* ------------------------------------------------------------------------------------


class ReadTextFileRequest(Wire, frozen=True, kw_only=True):
    """Params of `fs/read_text_file`: an absolute path, optional 1-based `line` and `limit`."""

    session_id: str
    path: str
    line: int | UnsetType | None = UNSET
    limit: int | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ReadTextFileResponse(Wire, frozen=True, kw_only=True):
    """Result of `fs/read_text_file`."""

    content: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class WriteTextFileRequest(Wire, frozen=True, kw_only=True):
    """Params of `fs/write_text_file`: an absolute path and the full new content."""

    session_id: str
    path: str
    content: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class WriteTextFileResponse(Wire, frozen=True, kw_only=True):
    """Result of `fs/write_text_file`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# --- terminal/* ------------------------------------------------------------------------------


class CreateTerminalRequest(Wire, frozen=True, kw_only=True):
    """Params of `terminal/create`; the client returns before the command finishes."""

    session_id: str
    command: str
    args: list[str] | UnsetType = UNSET
    env: list[EnvVariable] | UnsetType = UNSET
    cwd: str | UnsetType | None = UNSET
    output_byte_limit: int | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CreateTerminalResponse(Wire, frozen=True, kw_only=True):
    """Result of `terminal/create`."""

    terminal_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalOutputRequest(Wire, frozen=True, kw_only=True):
    """Params of `terminal/output`."""

    session_id: str
    terminal_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalExitStatus(Wire, frozen=True, kw_only=True):
    """How a terminal command ended: an exit code or a signal name."""

    exit_code: int | UnsetType | None = UNSET
    signal: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class TerminalOutputResponse(Wire, frozen=True, kw_only=True):
    """Result of `terminal/output`; `exit_status` is set once the command has exited."""

    output: str
    truncated: bool
    exit_status: TerminalExitStatus | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ReleaseTerminalRequest(Wire, frozen=True, kw_only=True):
    """Params of `terminal/release`: kill the command if running and free the terminal."""

    session_id: str
    terminal_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ReleaseTerminalResponse(Wire, frozen=True, kw_only=True):
    """Result of `terminal/release`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class WaitForTerminalExitRequest(Wire, frozen=True, kw_only=True):
    """Params of `terminal/wait_for_exit`."""

    session_id: str
    terminal_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class WaitForTerminalExitResponse(Wire, frozen=True, kw_only=True):
    """Result of `terminal/wait_for_exit`."""

    exit_code: int | UnsetType | None = UNSET
    signal: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class KillTerminalRequest(Wire, frozen=True, kw_only=True):
    """Params of `terminal/kill`: kill the command, keep the terminal."""

    session_id: str
    terminal_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class KillTerminalResponse(Wire, frozen=True, kw_only=True):
    """Result of `terminal/kill`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
