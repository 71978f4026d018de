"""Decoding is lenient where the protocol asks for it, strict where it must be, keeps UNSET and
null apart, and interoperates with the official Python SDK (agent-client-protocol)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from acp import schema as sdk
from acp.utils import serialize_params

from acp_protocol import client as c
from acp_protocol import content as ct
from acp_protocol import elicitation as el
from acp_protocol import initialize as i
from acp_protocol import mcp
from acp_protocol import session as s
from acp_protocol import session_config as sc
from acp_protocol import session_update as su
from acp_protocol import tool_call as tc
from acp_protocol.base import UNSET, Wire
from acp_protocol.methods import METHODS
from tests.support.protocol_examples import EXAMPLES


def encode(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


# --- leniency --------------------------------------------------------------------------------


def test_unknown_fields_are_ignored_at_every_level() -> None:
    raw = b"""{"sessionId": "s", "future": 1, "_meta": {"k": 1},
        "prompt": [{"type": "text", "text": "hi", "extra": {"x": [1]}},
                   {"type": "resource", "resource": {"uri": "u", "text": "t", "new": true}}]}"""
    request = msgspec.json.decode(raw, type=s.PromptRequest)
    assert request.prompt == [
        ct.TextContent(text="hi"),
        ct.EmbeddedResource(resource=ct.ResourceContents(uri="u", text="t")),
    ]
    assert request.meta == {"k": 1}


def test_minimal_initialize_request_gets_schema_defaults() -> None:
    request = msgspec.json.decode(b'{"protocolVersion": 1}', type=i.InitializeRequest)
    caps = request.client_capabilities
    assert caps == i.ClientCapabilities()
    assert not caps.fs.read_text_file and not caps.fs.write_text_file
    assert caps.terminal is False and caps.auth.terminal is False
    assert caps.session is UNSET and caps.elicitation is UNSET
    assert request.client_info is UNSET


def test_sdk_style_sparse_initialize_request() -> None:
    raw = b"""{"protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": true}, "auth": {}},
        "clientInfo": {"name": "acp-probe", "title": "ACP probe", "version": "0.1"}}"""
    request = msgspec.json.decode(raw, type=i.InitializeRequest)
    caps = request.client_capabilities
    assert caps.fs == i.FileSystemCapabilities(read_text_file=True)
    assert caps.terminal is False
    assert caps.auth == i.AuthCapabilities()
    assert request.client_info == i.Implementation(
        name="acp-probe", version="0.1", title="ACP probe"
    )


def test_unknown_config_category_and_mcp_transport_decode() -> None:
    option = msgspec.json.decode(
        b'{"type": "select", "id": "x", "name": "X", "category": "_mine", "currentValue": "a",'
        b' "options": []}',
        type=sc.SessionConfigOption,
    )
    assert isinstance(option, sc.SessionConfigSelect) and option.category == "_mine"
    server = msgspec.json.decode(b'{"type": "acp", "name": "n", "id": "i"}', type=mcp.McpServer)
    assert server.type == "acp" and not server.is_stdio


# --- strictness and error messages -----------------------------------------------------------


@pytest.mark.parametrize(
    ("wire_type", "raw", "path"),
    [
        (s.NewSessionRequest, b'{"cwd": 1, "mcpServers": []}', "$.cwd"),
        (s.NewSessionRequest, b'{"cwd": "/p"}', "mcpServers"),
        (s.PromptRequest, b'{"sessionId": "s", "prompt": [{"type": "text"}]}', "$.prompt[0]"),
        (s.PromptRequest, b'{"sessionId": "s", "prompt": [{"type": "video"}]}', "$.prompt[0]"),
        (
            su.SessionNotification,
            b'{"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t",'
            b' "title": "x", "status": "cancelled"}}',
            "$.update.status",
        ),
        (i.InitializeRequest, b'{"protocolVersion": "1"}', "$.protocolVersion"),
        (
            i.InitializeRequest,
            b'{"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": "yes"}}}',
            "$.clientCapabilities.fs.readTextFile",
        ),
    ],
)
def test_validation_errors_name_the_field(wire_type: Any, raw: bytes, path: str) -> None:
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.json.decode(raw, type=wire_type)
    assert path in str(info.value)


@pytest.mark.parametrize(
    ("wire_type", "raw"),
    [
        (mcp.McpServer, b'{"name": "fs", "command": "x", "args": []}'),
        (mcp.McpServer, b'{"type": "http", "name": "web", "headers": []}'),
        (ct.ResourceContents, b'{"uri": "file:///a"}'),
        (
            sc.SessionConfigSelect,
            b'{"type": "select", "id": "m", "name": "M", "currentValue": "a", "options":'
            b' [{"value": "a", "name": "A"}, {"group": "g", "name": "G", "options": []}]}',
        ),
        (
            sc.SessionConfigSelect,
            b'{"type": "select", "id": "m", "name": "M", "currentValue": "a", "options":'
            b' [{"group": "g", "name": "G", "options": [{"group": "h", "name": "H"}]}]}',
        ),
        (el.CreateElicitationRequest, b'{"message": "m", "mode": "url", "sessionId": "s"}'),
        (el.CreateElicitationRequest, b'{"message": "m", "mode": "form", "requestedSchema": {}}'),
        (el.MultiSelectItems, b'{"type": "string"}'),
    ],
)
def test_untagged_union_structs_check_their_variant(wire_type: Any, raw: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(raw, type=wire_type)


# --- UNSET vs null ---------------------------------------------------------------------------


def test_tool_call_update_unset_vs_null() -> None:
    assert encode(tc.ToolCallUpdate(tool_call_id="x")) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "x",
    }
    assert encode(tc.ToolCallUpdate(tool_call_id="x", title=None)) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "x",
        "title": None,
    }
    absent = msgspec.json.decode(b'{"toolCallId": "x"}', type=tc.ToolCallUpdateFields)
    null = msgspec.json.decode(
        b'{"toolCallId": "x", "title": null, "rawInput": null}', type=tc.ToolCallUpdateFields
    )
    assert absent.title is UNSET and absent.raw_input is UNSET
    assert null.title is None and null.raw_input is None
    assert encode(tc.ToolCallUpdateFields(tool_call_id="x")) == {"toolCallId": "x"}


def test_session_info_update_unset_vs_null() -> None:
    assert encode(su.SessionInfoUpdate(title="t")) == {
        "sessionUpdate": "session_info_update",
        "title": "t",
    }
    assert encode(su.SessionInfoUpdate(updated_at=None)) == {
        "sessionUpdate": "session_info_update",
        "updatedAt": None,
    }
    decoded = msgspec.json.decode(
        b'{"sessionUpdate": "session_info_update", "title": null}', type=su.SessionUpdate
    )
    assert decoded == su.SessionInfoUpdate(title=None)
    assert isinstance(decoded, su.SessionInfoUpdate) and decoded.updated_at is UNSET


def test_permission_tool_call_has_no_session_update_tag() -> None:
    request = c.RequestPermissionRequest(
        session_id="s",
        tool_call=tc.ToolCallUpdateFields(tool_call_id="call-1", status="pending"),
        options=[c.PermissionOption(option_id="a", name="Allow", kind="allow_once")],
    )
    assert encode(request)["toolCall"] == {"toolCallId": "call-1", "status": "pending"}


def test_wire_types_are_frozen() -> None:
    update = tc.ToolCallUpdate(tool_call_id="x")
    with pytest.raises(AttributeError):
        update.title = "y"  # type: ignore[misc]


# --- interop with the official Python SDK ----------------------------------------------------

SDK_PARAMS: list[tuple[str, Any]] = [
    ("initialize", sdk.InitializeRequest(protocol_version=1)),
    (
        "initialize",
        sdk.InitializeRequest(
            protocol_version=1,
            client_capabilities=sdk.ClientCapabilities(
                fs=sdk.FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=True,
            ),
            client_info=sdk.Implementation(name="sdk", version="0.12.1"),
        ),
    ),
    ("authenticate", sdk.AuthenticateRequest(method_id="login")),
    ("session/new", sdk.NewSessionRequest(cwd="/p", mcp_servers=[])),
    (
        "session/new",
        sdk.NewSessionRequest(
            cwd="/p",
            mcp_servers=[
                sdk.McpServerStdio(name="fs", command="/bin/fs", args=[], env=[]),
                sdk.HttpMcpServer(type="http", name="web", url="https://x.test", headers=[]),
                sdk.SseMcpServer(type="sse", name="sse", url="https://x.test/sse", headers=[]),
            ],
        ),
    ),
    ("session/load", sdk.LoadSessionRequest(cwd="/p", session_id="s", mcp_servers=[])),
    ("session/resume", sdk.ResumeSessionRequest(cwd="/p", session_id="s")),
    ("session/list", sdk.ListSessionsRequest()),
    ("session/close", sdk.CloseSessionRequest(session_id="s")),
    ("session/set_mode", sdk.SetSessionModeRequest(session_id="s", mode_id="code")),
    (
        "session/prompt",
        sdk.PromptRequest(
            session_id="s",
            prompt=[
                sdk.TextContentBlock(type="text", text="hi"),
                sdk.ResourceContentBlock(type="resource_link", uri="file:///a", name="a"),
                sdk.EmbeddedResourceContentBlock(
                    type="resource",
                    resource=sdk.TextResourceContents(uri="file:///b", text="b"),
                ),
            ],
        ),
    ),
    ("session/cancel", sdk.CancelNotification(session_id="s")),
]

SDK_RESULTS: list[tuple[str, Any]] = [
    (
        "session/request_permission",
        sdk.RequestPermissionResponse(outcome=sdk.DeniedOutcome(outcome="cancelled")),
    ),
    (
        "session/request_permission",
        sdk.RequestPermissionResponse(
            outcome=sdk.AllowedOutcome(outcome="selected", option_id="allow")
        ),
    ),
    ("fs/read_text_file", sdk.ReadTextFileResponse(content="x")),
    ("fs/write_text_file", sdk.WriteTextFileResponse()),
    ("terminal/create", sdk.CreateTerminalResponse(terminal_id="t")),
    ("terminal/output", sdk.TerminalOutputResponse(output="", truncated=False)),
    ("terminal/wait_for_exit", sdk.WaitForTerminalExitResponse()),
    ("terminal/kill", sdk.KillTerminalResponse()),
    ("terminal/release", sdk.ReleaseTerminalResponse()),
]


@pytest.mark.parametrize(("method", "model"), SDK_PARAMS)
def test_sdk_client_params_decode(method: str, model: Any) -> None:
    params = msgspec.json.encode(serialize_params(model))
    decoded = msgspec.json.decode(params, type=METHODS[method].params)
    assert isinstance(decoded, Wire)


@pytest.mark.parametrize(("method", "model"), SDK_RESULTS)
def test_sdk_client_results_decode(method: str, model: Any) -> None:
    result_type = METHODS[method].result
    assert result_type is not None
    decoded = msgspec.json.decode(msgspec.json.encode(serialize_params(model)), type=result_type)
    assert isinstance(decoded, Wire)


# Params the agent sends (methods handled by the client or either side) and results of the
# methods it handles, of the stable schema. The SDK's models (schema 1.19) have no
# `CreateElicitationRequest`.
STABLE = [spec for spec in METHODS.values() if spec.origin == "stable"]
AGENT_SENT = sorted(
    (
        {spec.params.__name__ for spec in STABLE if spec.direction != "agent"}
        | {spec.result.__name__ for spec in STABLE if spec.direction == "agent" and spec.result}
    )
    - {"CreateElicitationRequest"}
)


# Session updates a client must opt in to (`clientCapabilities.session.compaction` / `notices`):
# newer than the SDK's models, and never sent to a client that did not ask for them.
OPT_IN_UPDATES = (su.Notice, su.CompactionUpdate, su.CompactionSummaryChunk)


def _sent_to_every_client(example: Wire) -> bool:
    return not (
        isinstance(example, su.SessionNotification) and isinstance(example.update, OPT_IN_UPDATES)
    )


@pytest.mark.parametrize("name", AGENT_SENT)
def test_sdk_parses_what_the_agent_sends(name: str) -> None:
    """The SDK, as a client, accepts every example of every message the agent sends to every
    client."""
    model = getattr(sdk, name)
    examples = [e for e in EXAMPLES if type(e).__name__ == name and _sent_to_every_client(e)]
    assert examples
    for example in examples:
        model.model_validate_json(msgspec.json.encode(example))
