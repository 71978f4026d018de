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

__all__ = ["METHODS", "Direction", "MethodSpec"]

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
    MethodSpec("initialize", i.InitializeRequest, i.InitializeResponse, "agent"),
    MethodSpec("authenticate", i.AuthenticateRequest, i.AuthenticateResponse, "agent"),
    MethodSpec("logout", i.LogoutRequest, i.LogoutResponse, "agent"),
    MethodSpec("session/new", s.NewSessionRequest, s.NewSessionResponse, "agent"),
    MethodSpec("session/load", s.LoadSessionRequest, s.LoadSessionResponse, "agent"),
    MethodSpec("session/list", s.ListSessionsRequest, s.ListSessionsResponse, "agent"),
    MethodSpec("session/delete", s.DeleteSessionRequest, s.DeleteSessionResponse, "agent"),
    MethodSpec("session/resume", s.ResumeSessionRequest, s.ResumeSessionResponse, "agent"),
    MethodSpec("session/close", s.CloseSessionRequest, s.CloseSessionResponse, "agent"),
    MethodSpec("session/set_mode", s.SetSessionModeRequest, s.SetSessionModeResponse, "agent"),
    MethodSpec(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest,
        s.SetSessionConfigOptionResponse,
        "agent",
    ),
    MethodSpec("session/prompt", s.PromptRequest, s.PromptResponse, "agent"),
    MethodSpec("session/cancel", s.CancelNotification, None, "agent"),
    # handled by the client
    MethodSpec(
        "session/request_permission",
        c.RequestPermissionRequest,
        c.RequestPermissionResponse,
        "client",
    ),
    MethodSpec("session/update", SessionNotification, None, "client"),
    MethodSpec("fs/read_text_file", c.ReadTextFileRequest, c.ReadTextFileResponse, "client"),
    MethodSpec("fs/write_text_file", c.WriteTextFileRequest, c.WriteTextFileResponse, "client"),
    MethodSpec("terminal/create", c.CreateTerminalRequest, c.CreateTerminalResponse, "client"),
    MethodSpec("terminal/output", c.TerminalOutputRequest, c.TerminalOutputResponse, "client"),
    MethodSpec("terminal/release", c.ReleaseTerminalRequest, c.ReleaseTerminalResponse, "client"),
    MethodSpec(
        "terminal/wait_for_exit",
        c.WaitForTerminalExitRequest,
        c.WaitForTerminalExitResponse,
        "client",
    ),
    MethodSpec("terminal/kill", c.KillTerminalRequest, c.KillTerminalResponse, "client"),
    MethodSpec(
        "elicitation/create", e.CreateElicitationRequest, e.CreateElicitationResponse, "client"
    ),
    MethodSpec("elicitation/complete", e.CompleteElicitationNotification, None, "client"),
    # either side
    MethodSpec("$/cancel_request", CancelRequestNotification, None, "protocol"),
)
"""Every stable method of ACP v1 (schema 1.21.0), by wire name."""
