"""v2 `initialize`, `auth/login`, `auth/logout`, and the capability objects they carry.

v2 reorganised the capabilities: support markers are objects (present = supported), the agent's
session methods are grouped under `capabilities.session`, and the client has no `fs`, `terminal`
or `session` group any more. `info` is required both ways.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..base import Wire
from ..initialize import ElicitationCapabilities, Implementation
from ..mcp import EnvVariable

__all__ = [
    "PROTOCOL_VERSION",
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AuthMethod",
    "AuthMethodAgent",
    "AuthMethodTerminal",
    "ClientAuthCapabilities",
    "ClientCapabilities",
    "ElicitationCapabilities",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "LoginAuthRequest",
    "LoginAuthResponse",
    "LogoutAuthRequest",
    "LogoutAuthResponse",
    "McpCapabilities",
    "McpHttpCapabilities",
    "McpStdioCapabilities",
    "PromptAudioCapabilities",
    "PromptCapabilities",
    "PromptEmbeddedContextCapabilities",
    "PromptImageCapabilities",
    "ProtocolVersionOnly",
    "SessionAdditionalDirectoriesCapabilities",
    "SessionCapabilities",
    "SessionDeleteCapabilities",
    "TerminalAuthCapabilities",
]

PROTOCOL_VERSION = 2
"""The ACP protocol version these types describe."""

Meta = dict[str, Any] | UnsetType | None


class _Marker(Wire, frozen=True, kw_only=True):
    """A support marker: the object's presence says "supported"; it carries only `_meta`."""

    meta: Meta = msgspec.field(default=UNSET, name="_meta")


# --- client capabilities ---------------------------------------------------------------------


class TerminalAuthCapabilities(_Marker, frozen=True, kw_only=True):
    """`capabilities.auth.terminal`: the client can run `terminal` auth methods."""


class ClientAuthCapabilities(Wire, frozen=True, kw_only=True):
    terminal: TerminalAuthCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ClientCapabilities(Wire, frozen=True, kw_only=True):
    """What the client supports; anything omitted is unsupported."""

    auth: ClientAuthCapabilities | UnsetType | None = UNSET
    elicitation: ElicitationCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ProtocolVersionOnly(msgspec.Struct, rename="camel"):
    """The one field of `initialize` read before the version is chosen: the rest of the
    params is decoded by the chosen version's type."""

    protocol_version: int


class InitializeRequest(Wire, frozen=True, kw_only=True):
    """Params of a v2 `initialize`."""

    protocol_version: int
    info: Implementation
    capabilities: ClientCapabilities = msgspec.field(default_factory=ClientCapabilities)
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


# --- agent capabilities ----------------------------------------------------------------------


class PromptImageCapabilities(_Marker, frozen=True, kw_only=True):
    pass


class PromptAudioCapabilities(_Marker, frozen=True, kw_only=True):
    pass


class PromptEmbeddedContextCapabilities(_Marker, frozen=True, kw_only=True):
    pass


class PromptCapabilities(Wire, frozen=True, kw_only=True):
    """Content the agent takes in prompts beyond text and resource links."""

    image: PromptImageCapabilities | UnsetType | None = UNSET
    audio: PromptAudioCapabilities | UnsetType | None = UNSET
    embedded_context: PromptEmbeddedContextCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class McpStdioCapabilities(_Marker, frozen=True, kw_only=True):
    pass


class McpHttpCapabilities(_Marker, frozen=True, kw_only=True):
    pass


class McpCapabilities(Wire, frozen=True, kw_only=True):
    """MCP transports the agent connects to (v2 has no SSE)."""

    stdio: McpStdioCapabilities | UnsetType | None = UNSET
    http: McpHttpCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class SessionDeleteCapabilities(_Marker, frozen=True, kw_only=True):
    pass


class SessionAdditionalDirectoriesCapabilities(_Marker, frozen=True, kw_only=True):
    pass


class SessionCapabilities(Wire, frozen=True, kw_only=True):
    """`capabilities.session`: `{}` is the baseline (new, list, resume, close, prompt, cancel,
    update); each optional marker adds to it."""

    prompt: PromptCapabilities | UnsetType | None = UNSET
    mcp: McpCapabilities | UnsetType | None = UNSET
    delete: SessionDeleteCapabilities | UnsetType | None = UNSET
    additional_directories: SessionAdditionalDirectoriesCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class AgentAuthCapabilities(Wire, frozen=True, kw_only=True):
    """Auth extensions the agent supports (none are defined by the stable schema)."""

    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class AgentCapabilities(Wire, frozen=True, kw_only=True):
    """What the agent supports."""

    session: SessionCapabilities | UnsetType | None = UNSET
    auth: AgentAuthCapabilities | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class AuthMethodAgent(Wire, frozen=True, kw_only=True, tag_field="type", tag="agent"):
    """An auth method the agent runs itself (`auth/login` with its `method_id`)."""

    method_id: str
    name: str
    description: str | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class AuthMethodTerminal(Wire, frozen=True, kw_only=True, tag_field="type", tag="terminal"):
    """An auth method the client runs in a terminal: the agent's command plus `args`."""

    method_id: str
    name: str
    description: str | UnsetType | None = UNSET
    args: list[str] | UnsetType = UNSET
    env: list[EnvVariable] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


AuthMethod = AuthMethodAgent | AuthMethodTerminal


class InitializeResponse(Wire, frozen=True, kw_only=True):
    """Result of a v2 `initialize`. A non-empty `auth_methods` obliges the agent to answer
    both `auth/login` and `auth/logout`."""

    protocol_version: int
    info: Implementation
    capabilities: AgentCapabilities = msgspec.field(default_factory=AgentCapabilities)
    auth_methods: list[AuthMethod] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


# --- authentication --------------------------------------------------------------------------


class LoginAuthRequest(Wire, frozen=True, kw_only=True):
    """Params of `auth/login` (v1's `authenticate`)."""

    method_id: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class LoginAuthResponse(_Marker, frozen=True, kw_only=True):
    """Result of `auth/login`."""


class LogoutAuthRequest(_Marker, frozen=True, kw_only=True):
    """Params of `auth/logout`."""


class LogoutAuthResponse(_Marker, frozen=True, kw_only=True):
    """Result of `auth/logout`."""
