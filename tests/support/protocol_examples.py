"""Example values of every wire type, for the schema and method tests.

`EXAMPLES` holds minimal and full instances (every optional field set), plus the `None` (null)
variants of nullable fields. The schema tests encode each one and validate it.
"""

from __future__ import annotations

from acp_protocol import client as c
from acp_protocol import elicitation as el
from acp_protocol import session as s
from acp_protocol import session_update as su
from acp_protocol import tool_call as tc
from acp_protocol.base import CancelRequestNotification, Wire
from tests.support.protocol_examples_basic import (
    CONFIG_OPTIONS,
    CONTENT_EXAMPLES,
    ENV,
    HTTP_SERVER,
    INITIALIZE_EXAMPLES,
    MCP_EXAMPLES,
    META,
    MODE_STATE,
    PERMISSION_TOOL_CALL_FULL,
    PROMPT_BLOCKS,
    SESSION_CONFIG_EXAMPLES,
    STDIO_SERVER,
    TEXT,
    TOOL_CALL_EXAMPLES,
    TOOL_CALL_FULL,
    TOOL_CALL_UPDATE_TITLE_NULL,
)

# --- session methods -------------------------------------------------------------------------

SESSION_EXAMPLES: list[Wire] = [
    s.NewSessionRequest(cwd="/home/me/project", mcp_servers=[]),
    s.NewSessionRequest(
        cwd="/home/me/project",
        mcp_servers=[STDIO_SERVER, HTTP_SERVER],
        additional_directories=["/home/me/lib"],
        meta=META,
    ),
    s.NewSessionResponse(session_id="sess-1"),
    s.NewSessionResponse(
        session_id="sess-1", modes=MODE_STATE, config_options=CONFIG_OPTIONS, meta=META
    ),
    s.NewSessionResponse(session_id="sess-1", modes=None, config_options=None),
    s.LoadSessionRequest(session_id="sess-1", cwd="/p", mcp_servers=[]),
    s.LoadSessionRequest(
        session_id="sess-1",
        cwd="/p",
        mcp_servers=[STDIO_SERVER],
        additional_directories=["/q"],
        meta=META,
    ),
    s.LoadSessionResponse(),
    s.LoadSessionResponse(modes=MODE_STATE, config_options=CONFIG_OPTIONS, meta=META),
    s.LoadSessionResponse(modes=None, config_options=None),
    s.ResumeSessionRequest(session_id="sess-1", cwd="/p"),
    s.ResumeSessionRequest(
        session_id="sess-1",
        cwd="/p",
        mcp_servers=[STDIO_SERVER],
        additional_directories=[],
        meta=META,
    ),
    s.ResumeSessionResponse(),
    s.ResumeSessionResponse(modes=MODE_STATE, config_options=CONFIG_OPTIONS, meta=META),
    s.ResumeSessionResponse(modes=None, config_options=None),
    s.CloseSessionRequest(session_id="sess-1"),
    s.CloseSessionRequest(session_id="sess-1", meta=META),
    s.CloseSessionResponse(),
    s.CloseSessionResponse(meta=META),
    s.ListSessionsRequest(),
    s.ListSessionsRequest(cwd="/p", cursor="c2", meta=META),
    s.ListSessionsRequest(cwd=None, cursor=None),
    s.SessionInfo(session_id="sess-1", cwd="/p"),
    s.SessionInfo(
        session_id="sess-1",
        cwd="/p",
        additional_directories=["/q"],
        title="Fix the bug",
        updated_at="2026-01-02T03:04:05Z",
        meta=META,
    ),
    s.SessionInfo(session_id="sess-1", cwd="/p", title=None, updated_at=None),
    s.ListSessionsResponse(sessions=[]),
    s.ListSessionsResponse(
        sessions=[s.SessionInfo(session_id="sess-1", cwd="/p")], next_cursor="c3", meta=META
    ),
    s.ListSessionsResponse(sessions=[], next_cursor=None),
    s.DeleteSessionRequest(session_id="sess-1"),
    s.DeleteSessionRequest(session_id="sess-1", meta=META),
    s.DeleteSessionResponse(),
    s.DeleteSessionResponse(meta=META),
    s.SetSessionModeRequest(session_id="sess-1", mode_id="code"),
    s.SetSessionModeRequest(session_id="sess-1", mode_id="code", meta=META),
    s.SetSessionModeResponse(),
    s.SetSessionModeResponse(meta=META),
    s.SetSessionConfigOptionRequest(session_id="sess-1", config_id="model", value="fast"),
    s.SetSessionConfigOptionRequest(
        session_id="sess-1", config_id="web", type="boolean", value=False, meta=META
    ),
    s.SetSessionConfigOptionResponse(config_options=[]),
    s.SetSessionConfigOptionResponse(config_options=CONFIG_OPTIONS, meta=META),
    s.PromptRequest(session_id="sess-1", prompt=[TEXT]),
    s.PromptRequest(session_id="sess-1", prompt=PROMPT_BLOCKS, meta=META),
    s.PromptResponse(stop_reason="end_turn"),
    s.PromptResponse(stop_reason="cancelled", meta=META),
    s.CancelNotification(session_id="sess-1"),
    s.CancelNotification(session_id="sess-1", meta=META),
]

# --- session updates -------------------------------------------------------------------------

COMMAND = su.AvailableCommand(name="web", description="Search the web")
SESSION_UPDATES: list[su.SessionUpdate] = [
    su.UserMessageChunk(content=TEXT),
    su.UserMessageChunk(content=TEXT, message_id="msg-0", meta=META),
    su.AgentMessageChunk(content=TEXT),
    su.AgentMessageChunk(content=TEXT, message_id="msg-1", meta=META),
    su.AgentThoughtChunk(content=TEXT, message_id=None),
    su.AgentThoughtChunk(content=TEXT, message_id="msg-2", meta=META),
    TOOL_CALL_FULL,
    TOOL_CALL_UPDATE_TITLE_NULL,
    su.Plan(entries=[]),
    su.Plan(
        entries=[
            su.PlanEntry(content="Read", priority="high", status="completed"),
            su.PlanEntry(content="Fix", priority="low", status="in_progress", meta=META),
        ],
        meta=META,
    ),
    su.AvailableCommandsUpdate(available_commands=[]),
    su.AvailableCommandsUpdate(
        available_commands=[
            COMMAND,
            su.AvailableCommand(
                name="test",
                description="Run tests",
                input=su.UnstructuredCommandInput(hint="test name", meta=META),
                meta=META,
            ),
            su.AvailableCommand(name="x", description="y", input=None),
        ],
        meta=META,
    ),
    su.CurrentModeUpdate(current_mode_id="code"),
    su.CurrentModeUpdate(current_mode_id="code", meta=META),
    su.ConfigOptionUpdate(config_options=CONFIG_OPTIONS),
    su.ConfigOptionUpdate(config_options=[], meta=META),
    su.SessionInfoUpdate(),
    su.SessionInfoUpdate(title="New title"),
    su.SessionInfoUpdate(title=None, updated_at=None, meta=None),
    su.SessionInfoUpdate(title="T", updated_at="2026-01-02T03:04:05Z", meta=META),
    su.UsageUpdate(used=1200, size=200000),
    su.UsageUpdate(used=1200, size=200000, cost=su.Cost(amount=0.25, currency="USD"), meta=META),
    su.UsageUpdate(used=0, size=1, cost=None),
    su.Notice(severity="info", title="Context compacted"),
    su.Notice(severity="_custom", title="T", description="Details", meta=META),
    su.Notice(severity="warning", title="T", description=None, meta=None),
    su.CompactionUpdate(compaction_id="c-1", status="in_progress"),
    su.CompactionUpdate(
        compaction_id="c-1", status="completed", summary=[TEXT], error=None, meta=META
    ),
    su.CompactionUpdate(compaction_id="c-1", status="failed", summary=None, error="too long"),
    su.CompactionUpdate(compaction_id="c-1", status="cancelled", summary=[], meta=None),
    su.CompactionSummaryChunk(compaction_id="c-1", content=TEXT),
    su.CompactionSummaryChunk(compaction_id="c-1", content=TEXT, meta=META),
]

SESSION_UPDATE_EXAMPLES: list[Wire] = [
    *SESSION_UPDATES,
    su.PlanEntry(content="Read", priority="medium", status="pending"),
    su.PlanEntry(content="Read", priority="medium", status="pending", meta=META),
    COMMAND,
    su.AvailableCommand(
        name="test", description="Run tests", input=su.UnstructuredCommandInput(hint="h"), meta=META
    ),
    su.UnstructuredCommandInput(hint="query"),
    su.UnstructuredCommandInput(hint="query", meta=META),
    su.Cost(amount=1, currency="EUR", meta=META),
    *(su.SessionNotification(session_id="sess-1", update=update) for update in SESSION_UPDATES),
    su.SessionNotification(session_id="sess-1", update=SESSION_UPDATES[0], meta=META),
]

# --- methods handled by the client -----------------------------------------------------------

PERMISSION_OPTIONS = [
    c.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    c.PermissionOption(option_id="always", name="Always", kind="allow_always", meta=META),
    c.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    c.PermissionOption(option_id="never", name="Never", kind="reject_always"),
]

CLIENT_EXAMPLES: list[Wire] = [
    *PERMISSION_OPTIONS,
    c.RequestPermissionRequest(
        session_id="sess-1",
        tool_call=tc.ToolCallUpdateFields(tool_call_id="call-1"),
        options=PERMISSION_OPTIONS[:1],
    ),
    c.RequestPermissionRequest(
        session_id="sess-1",
        tool_call=PERMISSION_TOOL_CALL_FULL,
        options=PERMISSION_OPTIONS,
        meta=META,
    ),
    c.SelectedPermissionOutcome(option_id="allow"),
    c.SelectedPermissionOutcome(option_id="allow", meta=META),
    c.CancelledPermissionOutcome(),
    c.RequestPermissionResponse(outcome=c.SelectedPermissionOutcome(option_id="allow")),
    c.RequestPermissionResponse(outcome=c.CancelledPermissionOutcome(), meta=META),
    c.ReadTextFileRequest(session_id="sess-1", path="/p/a.py"),
    c.ReadTextFileRequest(session_id="sess-1", path="/p/a.py", line=10, limit=50, meta=META),
    c.ReadTextFileRequest(session_id="sess-1", path="/p/a.py", line=None, limit=None),
    c.ReadTextFileResponse(content=""),
    c.ReadTextFileResponse(content="line\n", meta=META),
    c.WriteTextFileRequest(session_id="sess-1", path="/p/a.py", content="x"),
    c.WriteTextFileRequest(session_id="sess-1", path="/p/a.py", content="x", meta=META),
    c.WriteTextFileResponse(),
    c.WriteTextFileResponse(meta=META),
    c.CreateTerminalRequest(session_id="sess-1", command="pytest"),
    c.CreateTerminalRequest(
        session_id="sess-1",
        command="pytest",
        args=["-q"],
        env=[ENV],
        cwd="/p",
        output_byte_limit=65536,
        meta=META,
    ),
    c.CreateTerminalRequest(session_id="sess-1", command="ls", cwd=None, output_byte_limit=None),
    c.CreateTerminalResponse(terminal_id="term-1"),
    c.CreateTerminalResponse(terminal_id="term-1", meta=META),
    c.TerminalOutputRequest(session_id="sess-1", terminal_id="term-1"),
    c.TerminalOutputRequest(session_id="sess-1", terminal_id="term-1", meta=META),
    c.TerminalExitStatus(),
    c.TerminalExitStatus(exit_code=1, signal="SIGTERM", meta=META),
    c.TerminalExitStatus(exit_code=None, signal=None),
    c.TerminalOutputResponse(output="", truncated=False),
    c.TerminalOutputResponse(
        output="ok\n", truncated=True, exit_status=c.TerminalExitStatus(exit_code=0), meta=META
    ),
    c.TerminalOutputResponse(output="", truncated=False, exit_status=None),
    c.ReleaseTerminalRequest(session_id="sess-1", terminal_id="term-1"),
    c.ReleaseTerminalRequest(session_id="sess-1", terminal_id="term-1", meta=META),
    c.ReleaseTerminalResponse(),
    c.ReleaseTerminalResponse(meta=META),
    c.WaitForTerminalExitRequest(session_id="sess-1", terminal_id="term-1", meta=META),
    c.WaitForTerminalExitResponse(),
    c.WaitForTerminalExitResponse(exit_code=0, signal=None, meta=META),
    c.KillTerminalRequest(session_id="sess-1", terminal_id="term-1"),
    c.KillTerminalRequest(session_id="sess-1", terminal_id="term-1", meta=META),
    c.KillTerminalResponse(),
    c.KillTerminalResponse(meta=META),
]

# --- elicitation -----------------------------------------------------------------------------

ENUM_OPTIONS = [
    el.EnumOption(const="a", title="A"),
    el.EnumOption(const="b", title="B", description="Bee", meta=META),
]
FORM_SCHEMA = el.ElicitationSchema(
    type="object",
    title="Details",
    description="Tell me more",
    properties={
        "name": el.StringPropertySchema(title="Name", min_length=1, max_length=40),
        "email": el.StringPropertySchema(format="email", default="a@b.c"),
        "pick": el.StringPropertySchema(one_of=ENUM_OPTIONS),
        "ratio": el.NumberPropertySchema(minimum=0, maximum=1, default=0.5),
        "count": el.IntegerPropertySchema(minimum=1, maximum=9, default=3, title="Count"),
        "ok": el.BooleanPropertySchema(default=True, description="Agree?"),
        "tags": el.MultiSelectPropertySchema(
            items=el.MultiSelectItems(type="string", enum=["x", "y"]), min_items=1, max_items=2
        ),
    },
    required=["name"],
    meta=META,
)

ELICITATION_EXAMPLES: list[Wire] = [
    *ENUM_OPTIONS,
    el.StringPropertySchema(),
    el.StringPropertySchema(
        title="Name",
        description="Your name",
        min_length=1,
        max_length=10,
        pattern="^[a-z]+$",
        format="date-time",
        default="bob",
        enum=["bob", "alice"],
        one_of=ENUM_OPTIONS,
        meta=META,
    ),
    el.StringPropertySchema(title=None, format=None, enum=None, one_of=None, default=None),
    el.NumberPropertySchema(),
    el.NumberPropertySchema(
        title="T", description="D", minimum=-1.5, maximum=2.5, default=0.1, meta=META
    ),
    el.IntegerPropertySchema(),
    el.IntegerPropertySchema(
        title="T", description="D", minimum=0, maximum=5, default=1, meta=META
    ),
    el.BooleanPropertySchema(),
    el.BooleanPropertySchema(title="T", description="D", default=False, meta=META),
    el.MultiSelectItems(type="string", enum=["x"]),
    el.MultiSelectItems(any_of=ENUM_OPTIONS, meta=META),
    el.MultiSelectPropertySchema(items=el.MultiSelectItems(type="string", enum=[])),
    el.MultiSelectPropertySchema(
        items=el.MultiSelectItems(any_of=ENUM_OPTIONS),
        title="Tags",
        description="Pick some",
        min_items=0,
        max_items=3,
        default=["a"],
        meta=META,
    ),
    el.MultiSelectPropertySchema(
        items=el.MultiSelectItems(type="string", enum=["x"]), min_items=None, default=None
    ),
    el.ElicitationSchema(),
    FORM_SCHEMA,
    el.ElicitationSchema(title=None, description=None, required=None),
    el.CreateElicitationRequest(
        message="Who are you?", mode="form", requested_schema=FORM_SCHEMA, session_id="sess-1"
    ),
    el.CreateElicitationRequest(
        message="Who are you?",
        mode="form",
        requested_schema=el.ElicitationSchema(),
        session_id="sess-1",
        tool_call_id="call-1",
        meta=META,
    ),
    el.CreateElicitationRequest(
        message="Log in", mode="url", elicitation_id="el-1", url="https://x.test/a", request_id=7
    ),
    el.CreateElicitationRequest(
        message="Log in",
        mode="url",
        elicitation_id="el-1",
        url="https://x.test/a",
        session_id="sess-1",
        tool_call_id=None,
    ),
    el.CreateElicitationResponse(action="accept"),
    el.CreateElicitationResponse(
        action="accept",
        content={"name": "bob", "count": 3, "ratio": 0.5, "ok": True, "tags": ["x"]},
        meta=META,
    ),
    el.CreateElicitationResponse(action="accept", content=None),
    el.CreateElicitationResponse(action="decline"),
    el.CreateElicitationResponse(action="cancel", meta=META),
    el.CompleteElicitationNotification(elicitation_id="el-1"),
    el.CompleteElicitationNotification(elicitation_id="el-1", meta=META),
]

BASE_EXAMPLES: list[Wire] = [
    CancelRequestNotification(request_id=3),
    CancelRequestNotification(request_id="req-3", meta=META),
    CancelRequestNotification(request_id=None),
]

EXAMPLES: list[Wire] = [
    *CONTENT_EXAMPLES,
    *TOOL_CALL_EXAMPLES,
    *SESSION_CONFIG_EXAMPLES,
    *MCP_EXAMPLES,
    *INITIALIZE_EXAMPLES,
    *SESSION_EXAMPLES,
    *SESSION_UPDATE_EXAMPLES,
    *CLIENT_EXAMPLES,
    *ELICITATION_EXAMPLES,
    *BASE_EXAMPLES,
]
