"""Session methods handled by the agent: new/load/resume/close/list/delete, modes, config
options, prompt and cancel."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .content import ContentBlock
from .mcp import McpServer
from .session_config import SessionConfigOption, SessionModeState

__all__ = [
    "CancelNotification",
    "CloseSessionRequest",
    "CloseSessionResponse",
    "DeleteSessionRequest",
    "DeleteSessionResponse",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "LoadSessionRequest",
    "LoadSessionResponse",
    "NewSessionRequest",
    "NewSessionResponse",
    "PromptRequest",
    "PromptResponse",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SessionInfo",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
    "SetSessionModeRequest",
    "SetSessionModeResponse",
    "StopReason",
]

StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"
]


# --- session/new, session/load, session/resume -----------------------------------------------


class NewSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/new`. `cwd` and `additional_directories` are absolute paths."""

    cwd: str
    mcp_servers: list[McpServer]
    additional_directories: list[str] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class NewSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/new`."""

    session_id: str
    modes: SessionModeState | UnsetType | None = UNSET
    config_options: list[SessionConfigOption] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LoadSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/load` (agent capability `loadSession`)."""

    session_id: str
    cwd: str
    mcp_servers: list[McpServer]
    additional_directories: list[str] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LoadSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/load`, sent after the history was replayed."""

    modes: SessionModeState | UnsetType | None = UNSET
    config_options: list[SessionConfigOption] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/resume` (session capability `resume`): no history replay."""

    session_id: str
    cwd: str
    mcp_servers: list[McpServer] | UnsetType = UNSET
    additional_directories: list[str] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/resume`."""

    modes: SessionModeState | UnsetType | None = UNSET
    config_options: list[SessionConfigOption] | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# --- session/close, session/list, session/delete ---------------------------------------------


class CloseSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/close` (session capability `close`)."""

    session_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CloseSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/close`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ListSessionsRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/list` (session capability `list`)."""

    cwd: str | UnsetType | None = UNSET
    cursor: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionInfo(Wire, frozen=True, kw_only=True):
    """One session in a `session/list` result. `updated_at` is an ISO 8601 timestamp."""

    session_id: str
    cwd: str
    additional_directories: list[str] | UnsetType = UNSET
    title: str | UnsetType | None = UNSET
    updated_at: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ListSessionsResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/list`. No `next_cursor` means the last page."""

    sessions: list[SessionInfo]
    next_cursor: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class DeleteSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/delete` (session capability `delete`)."""

    session_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class DeleteSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/delete`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# --- modes and config options ----------------------------------------------------------------


class SetSessionModeRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/set_mode`."""

    session_id: str
    mode_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SetSessionModeResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/set_mode`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# The schema's two shapes ({value: <value id>} for select, {type: "boolean", value: bool}) are
# one Struct: `value` is `str | bool` and `type` is optional (absent means a select option).
class SetSessionConfigOptionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/set_config_option`."""

    session_id: str
    config_id: str
    value: str | bool
    type: Literal["boolean"] | str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SetSessionConfigOptionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/set_config_option`: the complete list of config options."""

    config_options: list[SessionConfigOption]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# --- session/prompt, session/cancel ----------------------------------------------------------


class PromptRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/prompt`: one user message."""

    session_id: str
    prompt: list[ContentBlock]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PromptResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/prompt`, sent when the turn is over."""

    stop_reason: StopReason
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CancelNotification(Wire, frozen=True, kw_only=True):
    """Params of the `session/cancel` notification: cancel the session's running turn."""

    session_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
