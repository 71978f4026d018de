"""v2 requests the agent sends the client: `session/request_permission` with a prompt `title`
and a `subject` (a tool call, or a command the agent will run). Options, outcomes and
elicitation kept v1's shapes (`acp_protocol.client`, `acp_protocol.elicitation`)."""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from ..base import Wire
from ..client import PermissionOption
from .tool_call import ToolCallUpdateFields

__all__ = [
    "CommandPermissionSubject",
    "PermissionOption",
    "RequestPermissionRequest",
    "RequestPermissionSubject",
    "ToolCallPermissionSubject",
]

Meta = dict[str, Any] | UnsetType | None


class ToolCallPermissionSubject(Wire, frozen=True, kw_only=True, tag_field="type", tag="tool_call"):
    """The request is about a tool call; the client applies `tool_call` like a
    `tool_call_update` (so it must not carry a title the call does not have)."""

    tool_call: ToolCallUpdateFields
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class CommandPermissionSubject(Wire, frozen=True, kw_only=True, tag_field="type", tag="command"):
    """The request is about a command the agent would run, whole (approving authorizes it)."""

    command: str
    cwd: str
    tool_call_id: str | UnsetType | None = UNSET
    terminal_id: str | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


RequestPermissionSubject: TypeAlias = ToolCallPermissionSubject | CommandPermissionSubject


class RequestPermissionRequest(Wire, frozen=True, kw_only=True):
    """Params of a v2 `session/request_permission`; the answer is v1's
    `RequestPermissionResponse`."""

    session_id: str
    title: str
    options: list[PermissionOption]
    description: str | UnsetType | None = UNSET
    subject: RequestPermissionSubject | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")
