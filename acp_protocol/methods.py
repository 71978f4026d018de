"""The method table: every stable ACP v1 method with its params and result types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, TypeAlias

from . import client as c
from . import elicitation as e
from . import initialize as i
from . import session as s
from .base import CancelRequestNotification, Wire
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
    "SESSION_SET_CONFIG_OPTION",
    "SESSION_SET_MODE",
    "SESSION_UPDATE",
    "TERMINAL_CREATE",
    "TERMINAL_KILL",
    "TERMINAL_OUTPUT",
    "TERMINAL_RELEASE",
    "TERMINAL_WAIT_FOR_EXIT",
    "Direction",
    "MethodSpec",
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
"""Unstable schema only, so not in `METHODS` (the stable schema's table); answered all the
same, and advertised as `sessionCapabilities.fork`."""

Direction: TypeAlias = Literal["agent", "client", "protocol"]
"""Who handles the method (the schema's `x-side`): "agent" = the client calls the agent,
"client" = the agent calls the client, "protocol" = either side (`$/...`)."""


@dataclass(frozen=True)
class MethodSpec:
    name: str
    params: type[Wire]
    result: type[Wire] | None
    """The result type; None for a notification."""
    direction: Direction

    @property
    def is_notification(self) -> bool:
        return self.result is None


def _table(*specs: MethodSpec) -> Mapping[str, MethodSpec]:
    return MappingProxyType({spec.name: spec for spec in specs})


METHODS: Mapping[str, MethodSpec] = _table(
    # handled by the agent
    MethodSpec(INITIALIZE, i.InitializeRequest, i.InitializeResponse, "agent"),
    MethodSpec(AUTHENTICATE, i.AuthenticateRequest, i.AuthenticateResponse, "agent"),
    MethodSpec(LOGOUT, i.LogoutRequest, i.LogoutResponse, "agent"),
    MethodSpec(SESSION_NEW, s.NewSessionRequest, s.NewSessionResponse, "agent"),
    MethodSpec(SESSION_LOAD, s.LoadSessionRequest, s.LoadSessionResponse, "agent"),
    MethodSpec(SESSION_LIST, s.ListSessionsRequest, s.ListSessionsResponse, "agent"),
    MethodSpec(SESSION_DELETE, s.DeleteSessionRequest, s.DeleteSessionResponse, "agent"),
    MethodSpec(SESSION_RESUME, s.ResumeSessionRequest, s.ResumeSessionResponse, "agent"),
    MethodSpec(SESSION_CLOSE, s.CloseSessionRequest, s.CloseSessionResponse, "agent"),
    MethodSpec(SESSION_SET_MODE, s.SetSessionModeRequest, s.SetSessionModeResponse, "agent"),
    MethodSpec(
        SESSION_SET_CONFIG_OPTION,
        s.SetSessionConfigOptionRequest,
        s.SetSessionConfigOptionResponse,
        "agent",
    ),
    MethodSpec(SESSION_PROMPT, s.PromptRequest, s.PromptResponse, "agent"),
    MethodSpec(SESSION_CANCEL, s.CancelNotification, None, "agent"),
    # handled by the client
    MethodSpec(
        SESSION_REQUEST_PERMISSION,
        c.RequestPermissionRequest,
        c.RequestPermissionResponse,
        "client",
    ),
    MethodSpec(SESSION_UPDATE, SessionNotification, None, "client"),
    MethodSpec(FS_READ_TEXT_FILE, c.ReadTextFileRequest, c.ReadTextFileResponse, "client"),
    MethodSpec(FS_WRITE_TEXT_FILE, c.WriteTextFileRequest, c.WriteTextFileResponse, "client"),
    MethodSpec(TERMINAL_CREATE, c.CreateTerminalRequest, c.CreateTerminalResponse, "client"),
    MethodSpec(TERMINAL_OUTPUT, c.TerminalOutputRequest, c.TerminalOutputResponse, "client"),
    MethodSpec(TERMINAL_RELEASE, c.ReleaseTerminalRequest, c.ReleaseTerminalResponse, "client"),
    MethodSpec(
        TERMINAL_WAIT_FOR_EXIT,
        c.WaitForTerminalExitRequest,
        c.WaitForTerminalExitResponse,
        "client",
    ),
    MethodSpec(TERMINAL_KILL, c.KillTerminalRequest, c.KillTerminalResponse, "client"),
    MethodSpec(
        ELICITATION_CREATE, e.CreateElicitationRequest, e.CreateElicitationResponse, "client"
    ),
    MethodSpec(ELICITATION_COMPLETE, e.CompleteElicitationNotification, None, "client"),
    # either side
    MethodSpec(CANCEL_REQUEST, CancelRequestNotification, None, "protocol"),
)
"""Every stable method of ACP v1 (schema 1.21.0), by wire name."""
