"""Example values of the basic wire types (content, tool calls, config options, MCP servers,
initialize). The rest, and the complete `EXAMPLES` list, are in `protocol_examples.py`."""

from __future__ import annotations

from acp_protocol import content as ct
from acp_protocol import initialize as i
from acp_protocol import mcp
from acp_protocol import session_config as sc
from acp_protocol import tool_call as tc
from acp_protocol.base import Wire

META = {"example.com": {"trace": 1}, "traceparent": "00-abc-def-01"}

# --- content ---------------------------------------------------------------------------------

ANNOTATIONS_FULL = ct.Annotations(
    audience=["user", "assistant"], last_modified="2026-01-02T03:04:05Z", priority=0.5, meta=META
)
TEXT = ct.TextContent(text="hello")
TEXT_RESOURCE = ct.ResourceContents(uri="file:///a.py", text="print(1)")
BLOB_RESOURCE = ct.ResourceContents(
    uri="file:///a.pdf", blob="JVBERi0=", mime_type="application/pdf", meta=META
)
PROMPT_BLOCKS: list[ct.ContentBlock] = [
    TEXT,
    ct.ImageContent(data="iVBORw0K", mime_type="image/png"),
    ct.AudioContent(data="UklGRg==", mime_type="audio/wav"),
    ct.ResourceLink(uri="file:///doc.pdf", name="doc.pdf"),
    ct.EmbeddedResource(resource=TEXT_RESOURCE),
]

CONTENT_EXAMPLES: list[Wire] = [
    ct.Annotations(),
    ANNOTATIONS_FULL,
    ct.Annotations(audience=None, last_modified=None, priority=None, meta=None),
    TEXT,
    ct.TextContent(text="x", annotations=ANNOTATIONS_FULL, meta=META),
    ct.TextContent(text="x", annotations=None),
    ct.ImageContent(data="iVBORw0K", mime_type="image/png"),
    ct.ImageContent(
        data="iVBORw0K",
        mime_type="image/png",
        uri="file:///img.png",
        annotations=ct.Annotations(priority=1),
        meta=META,
    ),
    ct.ImageContent(data="iVBORw0K", mime_type="image/png", uri=None),
    ct.AudioContent(data="UklGRg==", mime_type="audio/wav"),
    ct.AudioContent(
        data="UklGRg==", mime_type="audio/wav", annotations=ANNOTATIONS_FULL, meta=META
    ),
    ct.ResourceLink(uri="file:///doc.pdf", name="doc.pdf"),
    ct.ResourceLink(
        uri="file:///doc.pdf",
        name="doc.pdf",
        mime_type="application/pdf",
        title="Doc",
        description="A document",
        size=1024,
        annotations=ANNOTATIONS_FULL,
        meta=META,
    ),
    ct.ResourceLink(
        uri="file:///doc.pdf",
        name="doc.pdf",
        mime_type=None,
        title=None,
        description=None,
        size=None,
    ),
    TEXT_RESOURCE,
    BLOB_RESOURCE,
    ct.ResourceContents(uri="file:///a.py", text="x", mime_type=None),
    ct.EmbeddedResource(resource=TEXT_RESOURCE),
    ct.EmbeddedResource(resource=BLOB_RESOURCE, annotations=ANNOTATIONS_FULL, meta=META),
]

# --- tool calls ------------------------------------------------------------------------------

TOOL_CONTENT: list[tc.ToolCallContent] = [
    tc.ContentToolCallContent(content=TEXT),
    tc.DiffToolCallContent(path="/p/a.py", old_text="a", new_text="b", meta=META),
    tc.TerminalToolCallContent(terminal_id="term-1", meta=META),
]
LOCATION_FULL = tc.ToolCallLocation(path="/p/a.py", line=3, meta=META)
TOOL_CALL_FULL = tc.ToolCall(
    tool_call_id="call-1",
    title="Edit a.py",
    name="edit_file",
    kind="edit",
    status="in_progress",
    content=TOOL_CONTENT,
    locations=[LOCATION_FULL],
    raw_input={"path": "/p/a.py"},
    raw_output=None,
    meta=META,
)
TOOL_CALL_UPDATE_TITLE_NULL = tc.ToolCallUpdate(tool_call_id="call-1", title=None)
PERMISSION_TOOL_CALL_FULL = tc.ToolCallUpdateFields(
    tool_call_id="call-1",
    title="Run tests",
    name="bash",
    kind="execute",
    status="pending",
    content=TOOL_CONTENT,
    locations=[LOCATION_FULL],
    raw_input={"cmd": "pytest"},
    raw_output="done",
    meta=META,
)

TOOL_CALL_EXAMPLES: list[Wire] = [
    *TOOL_CONTENT,
    tc.ContentToolCallContent(content=ct.EmbeddedResource(resource=TEXT_RESOURCE), meta=META),
    tc.DiffToolCallContent(path="/p/new.py", new_text="b"),
    tc.DiffToolCallContent(path="/p/new.py", new_text="b", old_text=None),
    tc.TerminalToolCallContent(terminal_id="term-1"),
    tc.ToolCallLocation(path="/p/a.py"),
    LOCATION_FULL,
    tc.ToolCallLocation(path="/p/a.py", line=None),
    tc.ToolCall(tool_call_id="call-1", title="Read a.py"),
    tc.ToolCall(tool_call_id="call-1", title="Read a.py", name=None),
    TOOL_CALL_FULL,
    tc.ToolCallUpdate(tool_call_id="call-1"),
    TOOL_CALL_UPDATE_TITLE_NULL,
    tc.ToolCallUpdate(
        tool_call_id="call-1",
        title="Edit a.py",
        name="edit_file",
        kind="switch_mode",
        status="failed",
        content=TOOL_CONTENT,
        locations=[LOCATION_FULL],
        raw_input=[1, 2],
        raw_output={"ok": True},
        meta=META,
    ),
    tc.ToolCallUpdate(
        tool_call_id="call-1",
        title=None,
        name=None,
        kind=None,
        status=None,
        content=None,
        locations=None,
        raw_input=None,
        raw_output=None,
        meta=None,
    ),
    tc.ToolCallUpdateFields(tool_call_id="call-1"),
    tc.ToolCallUpdateFields(tool_call_id="call-1", title=None, status=None),
    PERMISSION_TOOL_CALL_FULL,
]

# --- modes and config options ----------------------------------------------------------------

MODE_STATE = sc.SessionModeState(
    current_mode_id="ask",
    available_modes=[
        sc.SessionMode(id="ask", name="Ask"),
        sc.SessionMode(id="code", name="Code", description="Writes code", meta=META),
    ],
    meta=META,
)
OPTION = sc.SessionConfigSelectOption(value="fast", name="Fast")
GROUP = sc.SessionConfigSelectOption(
    group="speed",
    name="Speed",
    options=[OPTION, sc.SessionConfigSelectOption(value="slow", name="Slow")],
)
SELECT = sc.SessionConfigSelect(id="model", name="Model", current_value="fast", options=[OPTION])
BOOLEAN = sc.SessionConfigBoolean(id="web", name="Web search", current_value=True)
CONFIG_OPTIONS: list[sc.SessionConfigOption] = [SELECT, BOOLEAN]

SESSION_CONFIG_EXAMPLES: list[Wire] = [
    sc.SessionMode(id="ask", name="Ask"),
    sc.SessionMode(id="ask", name="Ask", description="Asks first", meta=META),
    sc.SessionMode(id="ask", name="Ask", description=None),
    sc.SessionModeState(current_mode_id="ask", available_modes=[]),
    MODE_STATE,
    OPTION,
    sc.SessionConfigSelectOption(value="fast", name="Fast", description="Quick", meta=META),
    sc.SessionConfigSelectOption(value="fast", name="Fast", description=None),
    GROUP,
    sc.SessionConfigSelectOption(group="speed", name="Speed", options=[], meta=META),
    SELECT,
    sc.SessionConfigSelect(
        id="speed",
        name="Speed",
        description="How fast",
        category="thought_level",
        current_value="fast",
        options=[GROUP, sc.SessionConfigSelectOption(group="none", name="None", options=[])],
        meta=META,
    ),
    sc.SessionConfigSelect(
        id="x", name="X", current_value="a", options=[], description=None, category=None
    ),
    sc.SessionConfigSelect(id="x", name="X", current_value="a", options=[], category="_vendor"),
    BOOLEAN,
    sc.SessionConfigBoolean(
        id="web", name="Web", current_value=False, description="d", category="model", meta=META
    ),
]

# --- MCP servers -----------------------------------------------------------------------------

ENV = mcp.EnvVariable(name="TOKEN", value="secret")
STDIO_SERVER = mcp.McpServer(name="fs", command="/bin/mcp-fs", args=["--stdio"], env=[ENV])
HTTP_SERVER = mcp.McpServer(type="http", name="web", url="https://mcp.example.com", headers=[])

MCP_EXAMPLES: list[Wire] = [
    ENV,
    mcp.EnvVariable(name="A", value="b", meta=META),
    mcp.HttpHeader(name="Authorization", value="Bearer x"),
    mcp.HttpHeader(name="Authorization", value="Bearer x", meta=META),
    mcp.McpServer(name="fs", command="/bin/mcp-fs", args=[], env=[]),
    mcp.McpServer(name="fs", command="/bin/mcp-fs", args=["-v"], env=[ENV], meta=META),
    HTTP_SERVER,
    mcp.McpServer(
        type="sse",
        name="events",
        url="https://mcp.example.com/sse",
        headers=[mcp.HttpHeader(name="X-Key", value="k")],
        meta=META,
    ),
]

# --- initialize / authenticate / logout ------------------------------------------------------

CLIENT_SESSION_CAPS_FULL = i.ClientSessionCapabilities(
    config_options=i.SessionConfigOptionsCapabilities(
        boolean=i.BooleanConfigOptionCapabilities(meta=META), meta=META
    ),
    compaction=i.CompactionCapabilities(),
    notices=i.NoticeCapabilities(),
    meta=META,
)
ELICITATION_CAPS_FULL = i.ElicitationCapabilities(
    form=i.ElicitationFormCapabilities(), url=i.ElicitationUrlCapabilities(meta=META), meta=META
)
CLIENT_CAPS_FULL = i.ClientCapabilities(
    fs=i.FileSystemCapabilities(read_text_file=True, write_text_file=True, meta=META),
    terminal=True,
    session=CLIENT_SESSION_CAPS_FULL,
    auth=i.AuthCapabilities(terminal=True, meta=META),
    elicitation=ELICITATION_CAPS_FULL,
    meta=META,
)
AGENT_CAPS_FULL = i.AgentCapabilities(
    load_session=True,
    prompt_capabilities=i.PromptCapabilities(
        image=True, audio=True, embedded_context=True, meta=META
    ),
    mcp_capabilities=i.McpCapabilities(http=True, sse=True, meta=META),
    session_capabilities=i.SessionCapabilities(
        list=i.SessionListCapabilities(),
        delete=i.SessionDeleteCapabilities(meta=META),
        additional_directories=i.SessionAdditionalDirectoriesCapabilities(),
        resume=i.SessionResumeCapabilities(),
        close=i.SessionCloseCapabilities(),
        meta=META,
    ),
    auth=i.AgentAuthCapabilities(logout=i.LogoutCapabilities(meta=META), meta=META),
    meta=META,
)
AUTH_AGENT = i.AuthMethod(id="login", name="Log in")
AUTH_TERMINAL = i.AuthMethod(
    type="terminal",
    id="tui",
    name="Terminal login",
    description="Runs the login flow",
    args=["--login"],
    env={"MODE": "tui"},
    meta=META,
)

INITIALIZE_EXAMPLES: list[Wire] = [
    i.Implementation(name="client", version="1.0"),
    i.Implementation(name="client", version="1.0", title="Client", meta=META),
    i.Implementation(name="client", version="1.0", title=None),
    i.FileSystemCapabilities(),
    i.FileSystemCapabilities(read_text_file=True, write_text_file=True, meta=META),
    i.AuthCapabilities(),
    i.AuthCapabilities(terminal=True, meta=META),
    i.BooleanConfigOptionCapabilities(),
    i.BooleanConfigOptionCapabilities(meta=META),
    i.SessionConfigOptionsCapabilities(),
    i.SessionConfigOptionsCapabilities(boolean=None, meta=None),
    i.ClientSessionCapabilities(),
    i.ClientSessionCapabilities(config_options=None, compaction=None, notices=None),
    i.CompactionCapabilities(),
    i.NoticeCapabilities(),
    CLIENT_SESSION_CAPS_FULL,
    i.ElicitationFormCapabilities(),
    i.ElicitationFormCapabilities(meta=META),
    i.ElicitationUrlCapabilities(),
    i.ElicitationUrlCapabilities(meta=META),
    i.ElicitationCapabilities(),
    i.ElicitationCapabilities(form=None, url=None),
    ELICITATION_CAPS_FULL,
    i.ClientCapabilities(),
    CLIENT_CAPS_FULL,
    i.ClientCapabilities(session=None, elicitation=None, meta=None),
    i.InitializeRequest(protocol_version=1),
    i.InitializeRequest(
        protocol_version=1,
        client_capabilities=CLIENT_CAPS_FULL,
        client_info=i.Implementation(name="zed", version="0.200.0", title="Zed"),
        meta=META,
    ),
    i.InitializeRequest(protocol_version=1, client_info=None),
    i.PromptCapabilities(),
    i.PromptCapabilities(image=True, audio=True, embedded_context=True, meta=META),
    i.McpCapabilities(),
    i.McpCapabilities(http=True, sse=True, meta=META),
    i.SessionListCapabilities(),
    i.SessionListCapabilities(meta=META),
    i.SessionDeleteCapabilities(),
    i.SessionDeleteCapabilities(meta=META),
    i.SessionAdditionalDirectoriesCapabilities(),
    i.SessionAdditionalDirectoriesCapabilities(meta=META),
    i.SessionResumeCapabilities(),
    i.SessionResumeCapabilities(meta=META),
    i.SessionCloseCapabilities(meta=META),
    i.SessionCapabilities(),
    i.SessionCapabilities(
        list=None, delete=None, additional_directories=None, resume=None, close=None
    ),
    AGENT_CAPS_FULL.session_capabilities,
    i.LogoutCapabilities(),
    i.LogoutCapabilities(meta=META),
    i.AgentAuthCapabilities(),
    i.AgentAuthCapabilities(logout=None),
    AGENT_CAPS_FULL.auth,
    i.AgentCapabilities(),
    AGENT_CAPS_FULL,
    AUTH_AGENT,
    i.AuthMethod(id="login", name="Log in", description=None, meta=META),
    AUTH_TERMINAL,
    i.InitializeResponse(protocol_version=1),
    i.InitializeResponse(
        protocol_version=1,
        agent_capabilities=AGENT_CAPS_FULL,
        auth_methods=[AUTH_AGENT, AUTH_TERMINAL],
        agent_info=i.Implementation(name="acp-server", version="0.1.0"),
        meta=META,
    ),
    i.InitializeResponse(protocol_version=1, agent_info=None),
    i.AuthenticateRequest(method_id="login"),
    i.AuthenticateRequest(method_id="login", meta=META),
    i.AuthenticateResponse(),
    i.AuthenticateResponse(meta=META),
    i.LogoutRequest(),
    i.LogoutRequest(meta=META),
    i.LogoutResponse(),
    i.LogoutResponse(meta=META),
]
