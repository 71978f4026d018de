"""The method table of ACP v1: every method this package knows, with the types its params and
result decode into, declared once.

`V1` holds one typed row per method, named by the schema's own keys (meta.json's `session_new`
is `V1.session_new`); `METHODS` is the same rows by wire name. The bridge routes a method by its
row (`Route(V1.session_load, handler)`, acp_server/rpc/dispatch.py), so a params type is written
here and nowhere else. A row's params type is what the agent decodes: the stable schema's, or a
subclass widened by the newer surface the client can opt into (acp_protocol/newer.py). Besides
the stable schema's methods the table holds those of the unstable schema this agent serves
(`session/fork`) and its extension (`_session/rewind`), each row saying where it comes from.
A later protocol version gets a table of its own beside this one, and the bridge a route group
for it (docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from . import client as c
from . import elicitation as e
from . import initialize as i
from . import newer as n
from . import session as s
from . import session_rewind as r
from . import unstable as u
from .base import CancelRequestNotification
from .session_update import SessionNotification

__all__ = [
    "AUTHENTICATE",
    "CANCEL_REQUEST",
    "ELICITATION_COMPLETE",
    "ELICITATION_CREATE",
    "FS_READ_TEXT_FILE",
    "FS_WRITE_TEXT_FILE",
    "INITIALIZE",
    "LOGOUT",
    "METHODS",
    "SESSION_CANCEL",
    "SESSION_CLOSE",
    "SESSION_DELETE",
    "SESSION_FORK",
    "SESSION_LIST",
    "SESSION_LOAD",
    "SESSION_NEW",
    "SESSION_PROMPT",
    "SESSION_REQUEST_PERMISSION",
    "SESSION_RESUME",
    "SESSION_REWIND",
    "SESSION_SET_CONFIG_OPTION",
    "SESSION_SET_MODE",
    "SESSION_UPDATE",
    "TERMINAL_CREATE",
    "TERMINAL_KILL",
    "TERMINAL_OUTPUT",
    "TERMINAL_RELEASE",
    "TERMINAL_WAIT_FOR_EXIT",
    "V1",
    "Direction",
    "MethodSpec",
    "Origin",
    "method_table",
]

# Wire names, so code names a method by constant and a typo is a NameError, not a silent -32601.
INITIALIZE = "initialize"
AUTHENTICATE = "authenticate"
LOGOUT = "logout"
SESSION_NEW = "session/new"
SESSION_LOAD = "session/load"
SESSION_LIST = "session/list"
SESSION_DELETE = "session/delete"
SESSION_RESUME = "session/resume"
SESSION_CLOSE = "session/close"
SESSION_SET_MODE = "session/set_mode"
SESSION_SET_CONFIG_OPTION = "session/set_config_option"
SESSION_PROMPT = "session/prompt"
SESSION_CANCEL = "session/cancel"
SESSION_REQUEST_PERMISSION = "session/request_permission"
SESSION_UPDATE = "session/update"
FS_READ_TEXT_FILE = "fs/read_text_file"
FS_WRITE_TEXT_FILE = "fs/write_text_file"
TERMINAL_CREATE = "terminal/create"
TERMINAL_OUTPUT = "terminal/output"
TERMINAL_RELEASE = "terminal/release"
TERMINAL_WAIT_FOR_EXIT = "terminal/wait_for_exit"
TERMINAL_KILL = "terminal/kill"
ELICITATION_CREATE = "elicitation/create"
ELICITATION_COMPLETE = "elicitation/complete"
CANCEL_REQUEST = "$/cancel_request"
SESSION_FORK = "session/fork"
"""Unstable schema only; answered all the same, and advertised as `sessionCapabilities.fork`."""
SESSION_REWIND = "_session/rewind"
"""The AIR session-rewind extension, named as the Claude and Codex adapters do."""

Direction: TypeAlias = Literal["agent", "client", "protocol"]
"""Who handles the method (the schema's `x-side`): "agent" = the client calls the agent,
"client" = the agent calls the client, "protocol" = either side (`$/...`)."""

Origin: TypeAlias = Literal["stable", "unstable", "extension"]
"""Where the method is defined: the stable schema (tests/data/acp/schema.json), the unstable one
(`schema.unstable.json`), or nowhere but here (an `_`-prefixed extension method)."""

P = TypeVar("P")


@dataclass(frozen=True)
class MethodSpec(Generic[P]):
    """One row of the method table."""

    name: str
    params: type[P]
    """What the params decode into (for the agent's methods: what its handler takes)."""
    result: type[Any] | None
    """The result type; None for a notification."""
    direction: Direction
    origin: Origin = "stable"

    @property
    def is_notification(self) -> bool:
        return self.result is None


class V1:
    """ACP v1 as this package speaks it, one row per method."""

    # handled by the agent
    initialize = MethodSpec(INITIALIZE, n.NewerInitializeRequest, i.InitializeResponse, "agent")
    authenticate = MethodSpec(AUTHENTICATE, i.AuthenticateRequest, i.AuthenticateResponse, "agent")
    logout = MethodSpec(LOGOUT, i.LogoutRequest, i.LogoutResponse, "agent")
    session_new = MethodSpec(SESSION_NEW, n.NewSessionWithPrompt, s.NewSessionResponse, "agent")
    session_load = MethodSpec(SESSION_LOAD, n.LoadSessionWithPrompt, s.LoadSessionResponse, "agent")
    session_list = MethodSpec(SESSION_LIST, s.ListSessionsRequest, s.ListSessionsResponse, "agent")
    session_delete = MethodSpec(
        SESSION_DELETE, s.DeleteSessionRequest, s.DeleteSessionResponse, "agent"
    )
    session_resume = MethodSpec(
        SESSION_RESUME, n.ResumeSessionWithPrompt, s.ResumeSessionResponse, "agent"
    )
    session_close = MethodSpec(
        SESSION_CLOSE, s.CloseSessionRequest, s.CloseSessionResponse, "agent"
    )
    session_set_mode = MethodSpec(
        SESSION_SET_MODE, s.SetSessionModeRequest, s.SetSessionModeResponse, "agent"
    )
    session_set_config_option = MethodSpec(
        SESSION_SET_CONFIG_OPTION,
        s.SetSessionConfigOptionRequest,
        s.SetSessionConfigOptionResponse,
        "agent",
    )
    # answered with acp_protocol.usage.PromptResponse: the stable result plus the turn's `usage`
    session_prompt = MethodSpec(SESSION_PROMPT, s.PromptRequest, s.PromptResponse, "agent")
    session_cancel = MethodSpec(SESSION_CANCEL, s.CancelNotification, None, "agent")
    session_fork = MethodSpec(
        SESSION_FORK, u.ForkSessionRequest, u.ForkSessionResponse, "agent", "unstable"
    )
    session_rewind = MethodSpec(
        SESSION_REWIND, r.RewindRequest, r.RewindResponse, "agent", "extension"
    )
    # handled by the client
    session_request_permission = MethodSpec(
        SESSION_REQUEST_PERMISSION,
        c.RequestPermissionRequest,
        c.RequestPermissionResponse,
        "client",
    )
    session_update = MethodSpec(SESSION_UPDATE, SessionNotification, None, "client")
    fs_read_text_file = MethodSpec(
        FS_READ_TEXT_FILE, c.ReadTextFileRequest, c.ReadTextFileResponse, "client"
    )
    fs_write_text_file = MethodSpec(
        FS_WRITE_TEXT_FILE, c.WriteTextFileRequest, c.WriteTextFileResponse, "client"
    )
    terminal_create = MethodSpec(
        TERMINAL_CREATE, c.CreateTerminalRequest, c.CreateTerminalResponse, "client"
    )
    terminal_output = MethodSpec(
        TERMINAL_OUTPUT, c.TerminalOutputRequest, c.TerminalOutputResponse, "client"
    )
    terminal_release = MethodSpec(
        TERMINAL_RELEASE, c.ReleaseTerminalRequest, c.ReleaseTerminalResponse, "client"
    )
    terminal_wait_for_exit = MethodSpec(
        TERMINAL_WAIT_FOR_EXIT,
        c.WaitForTerminalExitRequest,
        c.WaitForTerminalExitResponse,
        "client",
    )
    terminal_kill = MethodSpec(
        TERMINAL_KILL, c.KillTerminalRequest, c.KillTerminalResponse, "client"
    )
    elicitation_create = MethodSpec(
        ELICITATION_CREATE, e.CreateElicitationRequest, e.CreateElicitationResponse, "client"
    )
    elicitation_complete = MethodSpec(
        ELICITATION_COMPLETE, e.CompleteElicitationNotification, None, "client"
    )
    # either side
    cancel_request = MethodSpec(CANCEL_REQUEST, CancelRequestNotification, None, "protocol")


def method_table(version: type) -> Mapping[str, MethodSpec[Any]]:
    """The rows of a version's class (`V1`), by wire name, in the order they are declared."""
    rows = [row for row in vars(version).values() if isinstance(row, MethodSpec)]
    table = {row.name: row for row in rows}
    if len(table) != len(rows):
        raise ValueError(f"{version.__name__} names a method twice")
    return MappingProxyType(table)


METHODS: Mapping[str, MethodSpec[Any]] = method_table(V1)
"""Every method of ACP v1 that this package knows (the stable ones of schema 1.21.0, the
unstable `session/fork`, the `_session/rewind` extension), by wire name."""
