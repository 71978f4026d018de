"""The v2 method table: every ACP v2 method this package knows, with the types its params and
result decode into, declared once (as v1's table, `acp_protocol/methods.py`, does for v1).

`V2` holds one row per method. A method that kept v1's params and result types is v1's row
itself (`V2.session_list is V1.session_list`), so a handler both wires share is routed by one
row; a method whose shape changed has a row of its own. The v2 params types are those the agent
decodes: the stable schema's, or a subclass widened by the unstable `systemPrompt`. Besides the
stable schema's methods the table holds the unstable `session/fork` and the `_session/rewind`
extension, each row saying where it comes from. v1's `authenticate`, `logout`, `session/load`,
`session/set_mode`, `fs/*` and `terminal/create|output|release|wait_for_exit|kill` are not v2
methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import methods as m
from ..methods import V1, MethodSpec, method_table
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
    "V2",
]

AUTH_LOGIN = "auth/login"
AUTH_LOGOUT = "auth/logout"
TOOL_CALL_CANCEL = "tool_call/cancel"
TERMINAL_CANCEL = "terminal/cancel"


class V2:
    """ACP v2 as this package speaks it, one row per method."""

    # handled by the agent
    initialize = MethodSpec(m.INITIALIZE, i.InitializeRequest, i.InitializeResponse, "agent")
    auth_login = MethodSpec(AUTH_LOGIN, i.LoginAuthRequest, i.LoginAuthResponse, "agent")
    auth_logout = MethodSpec(AUTH_LOGOUT, i.LogoutAuthRequest, i.LogoutAuthResponse, "agent")
    session_new = MethodSpec(m.SESSION_NEW, u.NewSessionWithPrompt, s.NewSessionResponse, "agent")
    session_list = V1.session_list
    session_delete = V1.session_delete
    session_resume = MethodSpec(
        m.SESSION_RESUME, u.ResumeSessionWithPrompt, s.ResumeSessionResponse, "agent"
    )
    session_close = V1.session_close
    tool_call_cancel = MethodSpec(
        TOOL_CALL_CANCEL, s.CancelToolCallRequest, s.CancelToolCallResponse, "agent"
    )
    terminal_cancel = MethodSpec(
        TERMINAL_CANCEL, s.CancelTerminalRequest, s.CancelTerminalResponse, "agent"
    )
    session_set_config_option = MethodSpec(
        m.SESSION_SET_CONFIG_OPTION,
        V1.session_set_config_option.params,
        s.SetSessionConfigOptionResponse,
        "agent",
    )
    session_prompt = MethodSpec(
        m.SESSION_PROMPT, V1.session_prompt.params, s.PromptResponse, "agent"
    )
    session_cancel = V1.session_cancel
    session_fork = MethodSpec(
        m.SESSION_FORK, u.ForkSessionRequest, u.ForkSessionResponse, "agent", "unstable"
    )
    session_rewind = V1.session_rewind
    # handled by the client
    session_request_permission = MethodSpec(
        m.SESSION_REQUEST_PERMISSION,
        c.RequestPermissionRequest,
        V1.session_request_permission.result,
        "client",
    )
    session_update = MethodSpec(m.SESSION_UPDATE, su.UpdateSessionNotification, None, "client")
    elicitation_create = V1.elicitation_create
    elicitation_complete = V1.elicitation_complete
    # either side
    cancel_request = V1.cancel_request


METHODS: Mapping[str, MethodSpec[Any]] = method_table(V2)
"""Every method of ACP v2 that this package knows (the stable ones of the TS SDK 2.4.0 schema,
the unstable `session/fork`, the `_session/rewind` extension), by wire name."""
