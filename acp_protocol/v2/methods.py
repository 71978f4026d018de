"""The v2 method table: every stable ACP v2 method with its params and result types.

Method names v2 shares with v1 are v1's constants (`acp_protocol.methods`); the names only v2
has are here. v1's `authenticate`, `logout`, `session/load`, `session/set_mode`, `fs/*` and
`terminal/create|output|release|wait_for_exit|kill` are not v2 methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .. import client as c1
from .. import elicitation as e
from .. import methods as m
from .. import session as s1
from ..base import CancelRequestNotification
from . import client as c
from . import initialize as i
from . import session as s
from . import session_update as su
from . import unstable as u

__all__ = [
    "AUTH_LOGIN",
    "AUTH_LOGOUT",
    "METHODS",
    "TERMINAL_CANCEL",
    "TOOL_CALL_CANCEL",
    "UNSTABLE_METHODS",
]

AUTH_LOGIN = "auth/login"
AUTH_LOGOUT = "auth/logout"
TOOL_CALL_CANCEL = "tool_call/cancel"
TERMINAL_CANCEL = "terminal/cancel"


def _table(*specs: m.MethodSpec[Any]) -> Mapping[str, m.MethodSpec[Any]]:
    return MappingProxyType({spec.name: spec for spec in specs})


METHODS: Mapping[str, m.MethodSpec[Any]] = _table(
    # handled by the agent
    m.MethodSpec(m.INITIALIZE, i.InitializeRequest, i.InitializeResponse, "agent"),
    m.MethodSpec(AUTH_LOGIN, i.LoginAuthRequest, i.LoginAuthResponse, "agent"),
    m.MethodSpec(AUTH_LOGOUT, i.LogoutAuthRequest, i.LogoutAuthResponse, "agent"),
    m.MethodSpec(m.SESSION_NEW, s.NewSessionRequest, s.NewSessionResponse, "agent"),
    m.MethodSpec(m.SESSION_LIST, s1.ListSessionsRequest, s1.ListSessionsResponse, "agent"),
    m.MethodSpec(m.SESSION_DELETE, s1.DeleteSessionRequest, s1.DeleteSessionResponse, "agent"),
    m.MethodSpec(m.SESSION_RESUME, s.ResumeSessionRequest, s.ResumeSessionResponse, "agent"),
    m.MethodSpec(m.SESSION_CLOSE, s1.CloseSessionRequest, s1.CloseSessionResponse, "agent"),
    m.MethodSpec(TOOL_CALL_CANCEL, s.CancelToolCallRequest, s.CancelToolCallResponse, "agent"),
    m.MethodSpec(TERMINAL_CANCEL, s.CancelTerminalRequest, s.CancelTerminalResponse, "agent"),
    m.MethodSpec(
        m.SESSION_SET_CONFIG_OPTION,
        s1.SetSessionConfigOptionRequest,
        s.SetSessionConfigOptionResponse,
        "agent",
    ),
    m.MethodSpec(m.SESSION_PROMPT, s1.PromptRequest, s.PromptResponse, "agent"),
    m.MethodSpec(m.SESSION_CANCEL, s1.CancelNotification, None, "agent"),
    # handled by the client
    m.MethodSpec(
        m.SESSION_REQUEST_PERMISSION,
        c.RequestPermissionRequest,
        c1.RequestPermissionResponse,
        "client",
    ),
    m.MethodSpec(
        m.ELICITATION_CREATE, e.CreateElicitationRequest, e.CreateElicitationResponse, "client"
    ),
    m.MethodSpec(m.SESSION_UPDATE, su.UpdateSessionNotification, None, "client"),
    m.MethodSpec(m.ELICITATION_COMPLETE, e.CompleteElicitationNotification, None, "client"),
    # either side
    m.MethodSpec(m.CANCEL_REQUEST, CancelRequestNotification, None, "protocol"),
)
"""Every stable method of ACP v2 (the TS SDK 2.4.0 schema), by wire name."""


UNSTABLE_METHODS: Mapping[str, m.MethodSpec[Any]] = _table(
    m.MethodSpec(m.SESSION_FORK, u.ForkSessionRequest, u.ForkSessionResponse, "agent"),
)
"""The unstable v2 methods this agent answers (advertised by their capability markers)."""
