"""v2 session methods handled by the agent: new, resume (with replay), close, delete, prompt,
config options, and the per-item cancels `tool_call/cancel` and `terminal/cancel`.

`session/list`, `session/delete`, `session/close`, `session/prompt`'s params, `session/cancel` and
`session/set_config_option`'s params kept v1's shapes and use v1's Structs
(`acp_protocol.session`); `session/load` and `session/set_mode` are gone.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..base import Wire
from ..mcp import EnvVariable, HttpHeader
from .config import SessionConfigOption
from .session_update import AvailableCommand

__all__ = [
    "CancelTerminalRequest",
    "CancelTerminalResponse",
    "CancelToolCallRequest",
    "CancelToolCallResponse",
    "McpServer",
    "McpServerHttp",
    "McpServerStdio",
    "NewSessionRequest",
    "NewSessionResponse",
    "PromptResponse",
    "ReplayFrom",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SetSessionConfigOptionResponse",
]

Meta = dict[str, Any] | UnsetType | None


class McpServerStdio(Wire, frozen=True, kw_only=True, tag_field="type", tag="stdio"):
    """An MCP server the agent starts: an absolute `command` and its arguments."""

    name: str
    command: str
    args: list[str] | UnsetType = UNSET
    env: list[EnvVariable] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class McpServerHttp(Wire, frozen=True, kw_only=True, tag_field="type", tag="http"):
    """An MCP server over streamable HTTP."""

    name: str
    url: str
    headers: list[HttpHeader] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


McpServer = McpServerStdio | McpServerHttp
"""Every v2 server names its transport in `type` (SSE is gone); another type is refused -32602
when the params are decoded."""


class NewSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/new`; `mcp_servers` is optional in v2 (omitted: none)."""

    cwd: str
    additional_directories: list[str] | UnsetType = UNSET
    mcp_servers: list[McpServer] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class NewSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/new` (no `modes` in v2: the mode is a config option)."""

    session_id: str
    config_options: list[SessionConfigOption] | UnsetType = UNSET
    available_commands: list[AvailableCommand] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ReplayFrom(Wire, frozen=True, kw_only=True):
    """Where a resume replays from. Decoded with an open `type` so that a cursor this agent
    does not know reaches the handler, which must refuse it (-32602), never substitute one."""

    type: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionRequest(Wire, frozen=True, kw_only=True):
    """Params of `session/resume`: `replay_from` `{"type": "start"}` replays the whole history
    before the answer; UNSET or `None`: no replay."""

    session_id: str
    cwd: str
    additional_directories: list[str] | UnsetType = UNSET
    mcp_servers: list[McpServer] | UnsetType = UNSET
    replay_from: ReplayFrom | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/resume`, sent after the replay and the current state."""

    config_options: list[SessionConfigOption] | UnsetType = UNSET
    available_commands: list[AvailableCommand] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class PromptResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/prompt`: the prompt was inserted as the user message `message_id`.

    Not the turn's end (that is the idle `state_update`)."""

    message_id: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class SetSessionConfigOptionResponse(Wire, frozen=True, kw_only=True):
    """Result of `session/set_config_option`: every config option, as it now stands."""

    config_options: list[SessionConfigOption]
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class CancelToolCallRequest(Wire, frozen=True, kw_only=True):
    """Params of `tool_call/cancel`: stop one tool call that advertises `capabilities.cancel`."""

    session_id: str
    tool_call_id: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class CancelToolCallResponse(Wire, frozen=True, kw_only=True):
    """Result of `tool_call/cancel`: accepted (the call's final status confirms the stop)."""

    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class CancelTerminalRequest(Wire, frozen=True, kw_only=True):
    """Params of `terminal/cancel`: stop one terminal's process."""

    session_id: str
    terminal_id: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class CancelTerminalResponse(Wire, frozen=True, kw_only=True):
    """Result of `terminal/cancel`: accepted (an `exit_status` confirms the stop)."""

    meta: Meta = msgspec.field(default=UNSET, name="_meta")
