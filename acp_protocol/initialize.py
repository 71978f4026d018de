"""`initialize`, `authenticate`, `logout`, and the capability objects they carry.

Capability flags and objects for which the schema declares a default use that default (`False`,
an empty object), so a sparse client message decodes to usable values. With `omit_defaults` a
`False` flag is not sent; a capability object is always sent.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire

__all__ = [
    "PROTOCOL_VERSION",
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AuthCapabilities",
    "AuthMethod",
    "AuthenticateRequest",
    "AuthenticateResponse",
    "BooleanConfigOptionCapabilities",
    "ClientCapabilities",
    "ClientSessionCapabilities",
    "CompactionCapabilities",
    "ElicitationCapabilities",
    "ElicitationFormCapabilities",
    "ElicitationUrlCapabilities",
    "FileSystemCapabilities",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "LogoutCapabilities",
    "LogoutRequest",
    "LogoutResponse",
    "McpCapabilities",
    "NoticeCapabilities",
    "PromptCapabilities",
    "SessionAdditionalDirectoriesCapabilities",
    "SessionCapabilities",
    "SessionCloseCapabilities",
    "SessionConfigOptionsCapabilities",
    "SessionDeleteCapabilities",
    "SessionListCapabilities",
    "SessionResumeCapabilities",
]

PROTOCOL_VERSION = 1
"""The ACP protocol version implemented here (`protocolVersion`, a uint16)."""


class Implementation(Wire, frozen=True, kw_only=True):
    """Name and version of a client or agent implementation."""

    name: str
    version: str
    title: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# --- client capabilities ---------------------------------------------------------------------


class FileSystemCapabilities(Wire, frozen=True, kw_only=True):
    """Which `fs/*` methods the client supports."""

    read_text_file: bool = False
    write_text_file: bool = False
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthCapabilities(Wire, frozen=True, kw_only=True):
    """Client authentication capabilities (`terminal`: can run terminal auth methods)."""

    terminal: bool = False
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class BooleanConfigOptionCapabilities(Wire, frozen=True, kw_only=True):
    """Present: the client supports `boolean` session config options."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionConfigOptionsCapabilities(Wire, frozen=True, kw_only=True):
    boolean: BooleanConfigOptionCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class CompactionCapabilities(Wire, frozen=True, kw_only=True):
    """Client opt-in to `compaction_update` / `compaction_summary_chunk` (`{}` = supported)."""


class NoticeCapabilities(Wire, frozen=True, kw_only=True):
    """Client opt-in to `notice` session updates (`{}` = supported)."""


class ClientSessionCapabilities(Wire, frozen=True, kw_only=True):
    config_options: SessionConfigOptionsCapabilities | UnsetType | None = UNSET
    compaction: CompactionCapabilities | UnsetType | None = UNSET
    notices: NoticeCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationFormCapabilities(Wire, frozen=True, kw_only=True):
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationUrlCapabilities(Wire, frozen=True, kw_only=True):
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ElicitationCapabilities(Wire, frozen=True, kw_only=True):
    """Which `elicitation/create` modes the client supports."""

    form: ElicitationFormCapabilities | UnsetType | None = UNSET
    url: ElicitationUrlCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class ClientCapabilities(Wire, frozen=True, kw_only=True):
    """What the client supports. Anything omitted is unsupported."""

    fs: FileSystemCapabilities = msgspec.field(default_factory=FileSystemCapabilities)
    terminal: bool = False
    session: ClientSessionCapabilities | UnsetType | None = UNSET
    auth: AuthCapabilities = msgspec.field(default_factory=AuthCapabilities)
    elicitation: ElicitationCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class InitializeRequest(Wire, frozen=True, kw_only=True):
    """Params of `initialize`."""

    protocol_version: int
    client_capabilities: ClientCapabilities = msgspec.field(default_factory=ClientCapabilities)
    client_info: Implementation | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# --- agent capabilities ----------------------------------------------------------------------


class PromptCapabilities(Wire, frozen=True, kw_only=True):
    """Content types the agent accepts in prompts beyond text and resource links."""

    image: bool = False
    audio: bool = False
    embedded_context: bool = False
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class McpCapabilities(Wire, frozen=True, kw_only=True):
    """MCP transports the agent supports besides stdio."""

    http: bool = False
    sse: bool = False
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionListCapabilities(Wire, frozen=True, kw_only=True):
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionDeleteCapabilities(Wire, frozen=True, kw_only=True):
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionAdditionalDirectoriesCapabilities(Wire, frozen=True, kw_only=True):
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionResumeCapabilities(Wire, frozen=True, kw_only=True):
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionCloseCapabilities(Wire, frozen=True, kw_only=True):
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionCapabilities(Wire, frozen=True, kw_only=True):
    """Optional session methods the agent supports: each present (`{}`) means supported."""

    # No annotation in this class may use `list[...]`: the field `list` shadows the builtin
    # when msgspec evaluates the annotations.
    list: SessionListCapabilities | UnsetType | None = UNSET
    delete: SessionDeleteCapabilities | UnsetType | None = UNSET
    additional_directories: SessionAdditionalDirectoriesCapabilities | UnsetType | None = UNSET
    resume: SessionResumeCapabilities | UnsetType | None = UNSET
    close: SessionCloseCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LogoutCapabilities(Wire, frozen=True, kw_only=True):
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AgentAuthCapabilities(Wire, frozen=True, kw_only=True):
    logout: LogoutCapabilities | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AgentCapabilities(Wire, frozen=True, kw_only=True):
    """What the agent supports."""

    load_session: bool = False
    prompt_capabilities: PromptCapabilities = msgspec.field(default_factory=PromptCapabilities)
    mcp_capabilities: McpCapabilities = msgspec.field(default_factory=McpCapabilities)
    session_capabilities: SessionCapabilities = msgspec.field(default_factory=SessionCapabilities)
    auth: AgentAuthCapabilities = msgspec.field(default_factory=AgentAuthCapabilities)
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# One Struct for the schema's `AuthMethodTerminal | AuthMethodAgent`: the default (agent) variant
# has no `type` tag, which msgspec's tagged unions cannot express. `args`/`env` are terminal-only.
class AuthMethod(Wire, frozen=True, kw_only=True):
    """An authentication method: `type` unset = handled by the agent; "terminal" = run by client."""

    id: str
    name: str
    type: Literal["terminal"] | str | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    args: list[str] | UnsetType = UNSET
    env: dict[str, str] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class InitializeResponse(Wire, frozen=True, kw_only=True):
    """Result of `initialize`."""

    protocol_version: int
    agent_capabilities: AgentCapabilities = msgspec.field(default_factory=AgentCapabilities)
    auth_methods: list[AuthMethod] = msgspec.field(default_factory=list)
    agent_info: Implementation | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


# --- authentication --------------------------------------------------------------------------


class AuthenticateRequest(Wire, frozen=True, kw_only=True):
    """Params of `authenticate`."""

    method_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class AuthenticateResponse(Wire, frozen=True, kw_only=True):
    """Result of `authenticate`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LogoutRequest(Wire, frozen=True, kw_only=True):
    """Params of `logout`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class LogoutResponse(Wire, frozen=True, kw_only=True):
    """Result of `logout`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
