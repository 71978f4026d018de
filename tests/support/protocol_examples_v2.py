"""Example values of every ACP v2 wire type (`acp_protocol.v2`), minimal and full (every
optional field set), plus `None` (null) where a field is nullable, for tests/protocol's v2
checks. Reused v1 types are shown by v1's own examples (tests/support/protocol_examples.py)."""

from __future__ import annotations

from acp_protocol.base import Wire
from acp_protocol.client import PermissionOption, TerminalExitStatus
from acp_protocol.content import TextContent
from acp_protocol.initialize import ElicitationCapabilities, Implementation
from acp_protocol.jsonrpc import ErrorObject
from acp_protocol.mcp import EnvVariable, HttpHeader
from acp_protocol.system_prompt import (
    SessionSystemPromptCapabilities,
    SessionSystemPromptModeCapabilities,
    SessionSystemPromptOverrideCapabilities,
    SystemPrompt,
)
from acp_protocol.tool_call import ContentToolCallContent, TerminalToolCallContent, ToolCallLocation
from acp_protocol.unstable import SessionForkCapabilities
from acp_protocol.v2 import client as c
from acp_protocol.v2 import config as cf
from acp_protocol.v2 import errors as er
from acp_protocol.v2 import initialize as i
from acp_protocol.v2 import session as s
from acp_protocol.v2 import session_update as su
from acp_protocol.v2 import tool_call as tc
from acp_protocol.v2 import unstable as u

META = {"example.com": {"trace": 1}}
INFO = Implementation(name="acp-server", title="acp-server", version="1.0")
TEXT = TextContent(text="hello")
MARKERS: list[Wire] = [
    cls(meta=META)
    for cls in (
        i.TerminalAuthCapabilities,
        i.PromptImageCapabilities,
        i.PromptAudioCapabilities,
        i.PromptEmbeddedContextCapabilities,
        i.McpStdioCapabilities,
        i.McpHttpCapabilities,
        i.SessionDeleteCapabilities,
        i.SessionAdditionalDirectoriesCapabilities,
        i.AgentAuthCapabilities,
        i.LoginAuthResponse,
        i.LogoutAuthRequest,
        i.LogoutAuthResponse,
        tc.ToolCallCancelCapabilities,
        tc.TerminalCancelCapabilities,
        s.CancelToolCallResponse,
        s.CancelTerminalResponse,
        su.ReplayComplete,
    )
]
SESSION_CAPABILITIES = i.SessionCapabilities(
    prompt=i.PromptCapabilities(
        image=i.PromptImageCapabilities(),
        audio=i.PromptAudioCapabilities(),
        embedded_context=i.PromptEmbeddedContextCapabilities(),
        meta=META,
    ),
    mcp=i.McpCapabilities(stdio=i.McpStdioCapabilities(), http=i.McpHttpCapabilities(), meta=META),
    delete=i.SessionDeleteCapabilities(),
    additional_directories=i.SessionAdditionalDirectoriesCapabilities(),
    meta=META,
)
SELECT = cf.SessionConfigSelect(
    config_id="mode",
    name="Mode",
    current_value="default",
    options=[cf.SessionConfigSelectOption(value="default", name="Default")],
)
SELECT_FULL = cf.SessionConfigSelect(
    config_id="model",
    name="Model",
    current_value="a",
    options=[
        cf.SessionConfigSelectOption(
            group_id="fast",
            name="Fast",
            options=[
                cf.SessionConfigSelectOption(value="a", name="A", description="a model", meta=META)
            ],
            meta=META,
        )
    ],
    description="The model",
    category="model",
    meta=META,
)
BOOLEAN = cf.SessionConfigBoolean(config_id="x", name="X", current_value=True)
BOOLEAN_FULL = cf.SessionConfigBoolean(
    config_id="x", name="X", current_value=False, description="d", category="_x", meta=META
)
COMMAND = su.AvailableCommand(name="mode", description="Switch the mode")
COMMAND_FULL = su.AvailableCommand(
    name="mode",
    description="Switch the mode",
    input=su.TextCommandInput(hint="default | read_only", meta=META),
    meta=META,
)
STDIO = s.McpServerStdio(name="fs", command="/usr/bin/mcp-fs")
STDIO_FULL = s.McpServerStdio(
    name="fs",
    command="/usr/bin/mcp-fs",
    args=["--root", "/w"],
    env=[EnvVariable(name="A", value="1")],
    meta=META,
)
HTTP = s.McpServerHttp(name="web", url="http://127.0.0.1:8000/mcp")
HTTP_FULL = s.McpServerHttp(
    name="web",
    url="http://127.0.0.1:8000/mcp",
    headers=[HttpHeader(name="X-Team", value="a")],
    meta=META,
)
DIFF = tc.Diff(changes=[tc.DiffChange(operation="add", path="/w/a.py")])
DIFF_FULL = tc.Diff(
    changes=[
        tc.DiffChange(
            operation="modify", path="/w/b.py", file_type="text", mime_type="text/x-python"
        ),
        tc.DiffChange(operation="move", old_path="/w/c.py", path="/w/d.py", meta=META),
        tc.DiffChange(operation="delete", path="/w/e.py", file_type=None, mime_type=None),
    ],
    patch=tc.DiffPatch(format="git_patch", text="diff --git a/w/a.py b/w/a.py\n", meta=META),
    meta=META,
)
TOOL_CALL_FULL = tc.ToolCallUpdate(
    tool_call_id="call_1",
    name="bash",
    title="ls",
    kind="execute",
    status="in_progress",
    content=[
        ContentToolCallContent(content=TEXT),
        DIFF_FULL,
        TerminalToolCallContent(terminal_id="t"),
    ],
    locations=[ToolCallLocation(path="/w/a.py", line=3)],
    raw_input={"command": "ls"},
    raw_output={"exit": 0},
    capabilities=tc.ToolCallCapabilities(cancel=tc.ToolCallCancelCapabilities(), meta=META),
    meta=META,
)
TOOL_CALL_CLEARED = tc.ToolCallUpdate(
    tool_call_id="call_1",
    name=None,
    title=None,
    kind=None,
    status=None,
    content=None,
    locations=None,
    capabilities=None,
)
TERMINAL_FULL = tc.TerminalUpdate(
    terminal_id="call_1",
    command="ls -l",
    cwd="/w",
    output=tc.TerminalOutput(data="aGVsbG8K", meta=META),
    exit_status=TerminalExitStatus(exit_code=0, signal=None),
    size=tc.TerminalSize(cols=80, rows=24, meta=META),
    capabilities=tc.TerminalCapabilities(cancel=tc.TerminalCancelCapabilities(), meta=META),
    meta=META,
)

INITIALIZE: list[Wire] = [
    i.ClientAuthCapabilities(terminal=i.TerminalAuthCapabilities(), meta=META),
    i.ClientCapabilities(),
    i.ClientCapabilities(
        auth=i.ClientAuthCapabilities(), elicitation=ElicitationCapabilities(), meta=META
    ),
    i.ClientCapabilities(auth=None, elicitation=None, meta=None),
    i.InitializeRequest(protocol_version=2, info=INFO),
    i.InitializeRequest(
        protocol_version=2, info=INFO, capabilities=i.ClientCapabilities(), meta=META
    ),
    i.PromptCapabilities(),
    *([SESSION_CAPABILITIES.prompt] if isinstance(SESSION_CAPABILITIES.prompt, Wire) else []),
    i.PromptCapabilities(image=None, audio=None, embedded_context=None),
    i.McpCapabilities(),
    i.McpCapabilities(stdio=None, http=None, meta=None),
    i.SessionCapabilities(),
    SESSION_CAPABILITIES,
    i.SessionCapabilities(prompt=None, mcp=None, delete=None, additional_directories=None),
    i.AgentCapabilities(),
    i.AgentCapabilities(session=SESSION_CAPABILITIES, auth=i.AgentAuthCapabilities(), meta=META),
    i.AgentCapabilities(session=None, auth=None),
    i.AuthMethodAgent(method_id="configure-model", name="Configure a model"),
    i.AuthMethodAgent(method_id="configure-model", name="Configure", description="d", meta=META),
    i.AuthMethodAgent(method_id="configure-model", name="Configure", description=None),
    i.AuthMethodTerminal(method_id="setup", name="Set up"),
    i.AuthMethodTerminal(
        method_id="setup",
        name="Set up",
        description="d",
        args=["setup"],
        env=[EnvVariable(name="A", value="1")],
        meta=META,
    ),
    i.InitializeResponse(protocol_version=2, info=INFO),
    i.InitializeResponse(
        protocol_version=2,
        info=INFO,
        capabilities=i.AgentCapabilities(session=i.SessionCapabilities()),
        auth_methods=[
            i.AuthMethodAgent(method_id="a", name="A"),
            i.AuthMethodTerminal(method_id="b", name="B"),
        ],
        meta=META,
    ),
    i.LoginAuthRequest(method_id="configure-model"),
    i.LoginAuthRequest(method_id="configure-model", meta=META),
    i.LoginAuthResponse(),
    i.LogoutAuthRequest(),
    i.LogoutAuthResponse(),
    *MARKERS,
]

SESSION: list[Wire] = [
    SELECT,
    SELECT_FULL,
    cf.SessionConfigSelect(
        config_id="m",
        name="M",
        current_value="a",
        options=[cf.SessionConfigSelectOption(value="a", name="A")],
        description=None,
        category=None,
    ),
    BOOLEAN,
    BOOLEAN_FULL,
    cf.SessionConfigSelectOption(value="a", name="A"),
    *SELECT_FULL.options,
    *SELECT_FULL.options[0].options,  # type: ignore[misc]
    cf.SessionConfigSelectOption(value="a", name="A", description=None),
    STDIO,
    STDIO_FULL,
    HTTP,
    HTTP_FULL,
    s.NewSessionRequest(cwd="/w"),
    s.NewSessionRequest(
        cwd="/w", additional_directories=["/x"], mcp_servers=[STDIO, HTTP], meta=META
    ),
    s.NewSessionResponse(session_id="sess_1"),
    s.NewSessionResponse(
        session_id="sess_1",
        config_options=[SELECT, BOOLEAN],
        available_commands=[COMMAND],
        meta=META,
    ),
    s.ReplayFrom(type="start"),
    s.ReplayFrom(type="start", meta=META),
    s.ResumeSessionRequest(session_id="sess_1", cwd="/w"),
    s.ResumeSessionRequest(
        session_id="sess_1",
        cwd="/w",
        additional_directories=["/x"],
        mcp_servers=[HTTP_FULL],
        replay_from=s.ReplayFrom(type="start"),
        meta=META,
    ),
    s.ResumeSessionRequest(session_id="sess_1", cwd="/w", replay_from=None),
    s.ResumeSessionResponse(),
    s.ResumeSessionResponse(
        config_options=[SELECT_FULL], available_commands=[COMMAND_FULL], meta=META
    ),
    s.PromptResponse(message_id="msg_1"),
    s.PromptResponse(message_id="msg_1", meta=META),
    s.SetSessionConfigOptionResponse(config_options=[SELECT]),
    s.SetSessionConfigOptionResponse(config_options=[BOOLEAN_FULL], meta=META),
    s.CancelToolCallRequest(session_id="sess_1", tool_call_id="call_1"),
    s.CancelToolCallRequest(session_id="sess_1", tool_call_id="call_1", meta=META),
    s.CancelToolCallResponse(),
    s.CancelTerminalRequest(session_id="sess_1", terminal_id="t"),
    s.CancelTerminalRequest(session_id="sess_1", terminal_id="t", meta=META),
    s.CancelTerminalResponse(),
]

TOOL_CALLS: list[Wire] = [
    *DIFF_FULL.changes,
    *([DIFF_FULL.patch] if isinstance(DIFF_FULL.patch, Wire) else []),
    *[
        part
        for part in (TERMINAL_FULL.output, TERMINAL_FULL.size, TERMINAL_FULL.capabilities)
        if isinstance(part, Wire)
    ],
    *([TOOL_CALL_FULL.capabilities] if isinstance(TOOL_CALL_FULL.capabilities, Wire) else []),
    tc.ToolCallUpdateFields(
        tool_call_id="call_1",
        name="bash",
        title="ls",
        kind="execute",
        status="pending",
        content=[ContentToolCallContent(content=TEXT)],
        locations=[ToolCallLocation(path="/w/a.py")],
        raw_input={"command": "ls"},
        raw_output={},
        capabilities=tc.ToolCallCapabilities(),
        meta=META,
    ),
    tc.DiffChange(operation="add", path="/w/a.py"),
    tc.DiffChange(operation="copy", old_path="/w/a.py", path="/w/b.py", file_type="text"),
    tc.DiffPatch(format="git_patch", text="diff --git a/x b/x\n"),
    DIFF,
    DIFF_FULL,
    tc.Diff(changes=[], patch=None),
    tc.ToolCallCapabilities(),
    tc.ToolCallCapabilities(cancel=None),
    tc.ToolCallUpdate(tool_call_id="call_1"),
    TOOL_CALL_FULL,
    TOOL_CALL_CLEARED,
    tc.ToolCallUpdateFields(tool_call_id="call_1", raw_input={"path": "/w/a.py"}),
    tc.ToolCallUpdateFields(tool_call_id="call_1", title="t", status="pending", meta=META),
    tc.ToolCallContentChunk(tool_call_id="call_1", content=ContentToolCallContent(content=TEXT)),
    tc.ToolCallContentChunk(tool_call_id="call_1", content=DIFF, meta=META),
    tc.TerminalOutput(data="aGk="),
    tc.TerminalSize(cols=80, rows=24),
    tc.TerminalCapabilities(),
    tc.TerminalCapabilities(cancel=None),
    tc.TerminalUpdate(terminal_id="t"),
    TERMINAL_FULL,
    tc.TerminalUpdate(
        terminal_id="t",
        command=None,
        cwd=None,
        output=None,
        exit_status=None,
        size=None,
        capabilities=None,
    ),
    tc.TerminalOutputChunk(terminal_id="t", data="aGk="),
    tc.TerminalOutputChunk(terminal_id="t", data="aGk=", meta=META),
    tc.BackgroundTerminal(terminal_id="t"),
    tc.BackgroundTerminal(terminal_id="t", meta=META),
    tc.BackgroundToolCall(tool_call_id="call_1"),
    tc.BackgroundToolCall(tool_call_id="call_1", meta=META),
]

UPDATES: list[Wire] = [
    su.UserMessageChunk(message_id="m", content=TEXT),
    su.UserMessageChunk(message_id="m", content=TEXT, meta=META),
    su.AgentMessageChunk(message_id="m", content=TEXT),
    su.AgentMessageChunk(message_id="m", content=TEXT, meta=META),
    su.AgentThoughtChunk(message_id="m", content=TEXT),
    su.AgentThoughtChunk(message_id="m", content=TEXT, meta=META),
    su.UserMessage(message_id="m"),
    su.UserMessage(message_id="m", content=[TEXT], meta=META),
    su.UserMessage(message_id="m", content=None, meta=None),
    su.AgentMessage(message_id="m"),
    su.AgentMessage(message_id="m", content=[TEXT], meta=META),
    su.AgentMessage(message_id="m", content=None),
    su.AgentThought(message_id="m"),
    su.AgentThought(message_id="m", content=[TEXT], meta=META),
    su.AgentThought(message_id="m", content=None),
    su.StateUpdate(state="running"),
    su.StateUpdate(state="requires_action", background=[], meta=META),
    su.StateUpdate(state="idle"),
    su.StateUpdate(state="idle", stop_reason="end_turn", background=None),
    su.StateUpdate(state="idle", stop_reason=None),
    su.StateUpdate(
        state="idle",
        stop_reason="error",
        error=ErrorObject(code=-32603, message="The turn failed"),
        background=[
            tc.BackgroundTerminal(terminal_id="t"),
            tc.BackgroundToolCall(tool_call_id="c"),
        ],
        meta=META,
    ),
    su.StateUpdate(state="idle", stop_reason="error", error=None),
    su.TextCommandInput(hint="h"),
    su.TextCommandInput(hint="h", meta=META),
    COMMAND,
    COMMAND_FULL,
    su.AvailableCommand(name="x", description="y", input=None),
    su.AvailableCommandsUpdate(available_commands=[]),
    su.AvailableCommandsUpdate(available_commands=[COMMAND, COMMAND_FULL], meta=META),
    su.ConfigOptionUpdate(config_options=[SELECT]),
    su.ConfigOptionUpdate(config_options=[SELECT_FULL, BOOLEAN], meta=META),
    su.ReplayComplete(),
    su.UpdateSessionNotification(session_id="sess_1", update=su.StateUpdate(state="running")),
    su.UpdateSessionNotification(session_id="sess_1", update=TOOL_CALL_FULL, meta=META),
]

CLIENT: list[Wire] = [
    c.ToolCallPermissionSubject(tool_call=tc.ToolCallUpdateFields(tool_call_id="call_1")),
    c.ToolCallPermissionSubject(
        tool_call=tc.ToolCallUpdateFields(tool_call_id="call_1", raw_input={}), meta=META
    ),
    c.CommandPermissionSubject(command="ls", cwd="/w"),
    c.CommandPermissionSubject(
        command="ls", cwd="/w", tool_call_id="call_1", terminal_id="t", meta=META
    ),
    c.CommandPermissionSubject(command="ls", cwd="/w", tool_call_id=None, terminal_id=None),
    c.RequestPermissionRequest(
        session_id="sess_1",
        title="Allow: ls?",
        options=[PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")],
    ),
    c.RequestPermissionRequest(
        session_id="sess_1",
        title="Allow: ls?",
        options=[PermissionOption(option_id="reject_once", name="Reject", kind="reject_once")],
        description="It lists the files.",
        subject=c.CommandPermissionSubject(command="ls", cwd="/w"),
        meta=META,
    ),
    c.RequestPermissionRequest(
        session_id="sess_1",
        title="t",
        options=[PermissionOption(option_id="a", name="A", kind="allow_once")],
        description=None,
        subject=None,
    ),
]

ERRORS: list[Wire] = [
    er.UnsupportedProtocolVersionErrorData(requested=0, supported=[1, 2]),
    er.UnsupportedProtocolVersionErrorData(requested=0, supported=[1, 2], meta=META),
    er.SessionNotFoundErrorData(session_id="sess_1"),
    er.SessionNotFoundErrorData(session_id="sess_1", meta=META),
]

PROMPT = SystemPrompt(mode="append", content=[TEXT])
UNSTABLE: list[Wire] = [
    u.ForkingSessionCapabilities(),
    u.ForkingSessionCapabilities(
        prompt=i.PromptCapabilities(),
        mcp=i.McpCapabilities(),
        delete=i.SessionDeleteCapabilities(),
        additional_directories=i.SessionAdditionalDirectoriesCapabilities(),
        system_prompt=SessionSystemPromptCapabilities(
            mode=SessionSystemPromptModeCapabilities(
                override=SessionSystemPromptOverrideCapabilities()
            )
        ),
        fork=SessionForkCapabilities(),
        meta=META,
    ),
    u.NewSessionWithPrompt(cwd="/w"),
    u.NewSessionWithPrompt(
        cwd="/w",
        additional_directories=["/x"],
        mcp_servers=[STDIO],
        system_prompt=PROMPT,
        meta=META,
    ),
    u.ResumeSessionWithPrompt(session_id="sess_1", cwd="/w"),
    u.ResumeSessionWithPrompt(
        session_id="sess_1",
        cwd="/w",
        additional_directories=["/x"],
        mcp_servers=[HTTP],
        replay_from=s.ReplayFrom(type="start"),
        system_prompt=PROMPT,
        meta=META,
    ),
    u.ForkSessionRequest(session_id="sess_1", cwd="/w"),
    u.ForkSessionRequest(
        session_id="sess_1",
        cwd="/w",
        additional_directories=["/x"],
        mcp_servers=[STDIO_FULL],
        system_prompt=PROMPT,
        meta=META,
    ),
    u.ForkSessionResponse(session_id="sess_2"),
    u.ForkSessionResponse(
        session_id="sess_2", config_options=[SELECT], available_commands=[COMMAND], meta=META
    ),
]

EXAMPLES: list[Wire] = [*INITIALIZE, *SESSION, *TOOL_CALLS, *UPDATES, *CLIENT, *ERRORS]
"""Checked against the stable v2 schema."""
UNSTABLE_EXAMPLES: list[Wire] = UNSTABLE
"""Checked against the unstable v2 schema."""
