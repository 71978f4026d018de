"""The ACP v2 wire types (`acp_protocol.v2`) against the v2 schemas of the TS SDK 2.4.0: every
type encodes to JSON its definition accepts, with exactly the definition's members, and decodes
back; the v1 types v2 reuses fit the v2 definitions; the v2 method table is the schema's."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from msgspec import UNSET

import acp_protocol.v2
from acp_protocol import client as c1
from acp_protocol import content as ct
from acp_protocol import elicitation as el
from acp_protocol import initialize as i1
from acp_protocol import mcp
from acp_protocol import plan_operations as po
from acp_protocol import session as s1
from acp_protocol import session_update as su1
from acp_protocol import system_prompt as sp
from acp_protocol import tool_call as tc1
from acp_protocol import unstable as un1
from acp_protocol.base import CancelRequestNotification, Wire
from acp_protocol.methods import METHODS as V1_METHODS
from acp_protocol.v2 import client as c
from acp_protocol.v2 import config as cf
from acp_protocol.v2 import initialize as i
from acp_protocol.v2 import session as s
from acp_protocol.v2 import session_update as su
from acp_protocol.v2 import tool_call as tc
from acp_protocol.v2 import unstable as u
from acp_protocol.v2.methods import METHODS
from tests.support.protocol_examples import EXAMPLES as V1_EXAMPLES
from tests.support.protocol_examples_v2 import EXAMPLES, UNSTABLE_EXAMPLES
from tests.support.v2_schema import STABLE, UNSTABLE, V2Schema

UPDATES = "SessionUpdate"

# The def an encoded instance is validated against, where it is not the def of the class's
# name (a tagged variant is validated by its union, which checks the tag).
VALIDATED_AS: dict[type, str | tuple[str, ...]] = {
    **{
        cls: UPDATES
        for cls in (
            su.UserMessageChunk,
            su.AgentMessageChunk,
            su.AgentThoughtChunk,
            su.UserMessage,
            su.AgentMessage,
            su.AgentThought,
            su.StateUpdate,
            su.AvailableCommandsUpdate,
            su.ConfigOptionUpdate,
            su.ReplayComplete,
            tc.ToolCallUpdate,
            tc.ToolCallContentChunk,
            tc.TerminalUpdate,
            tc.TerminalOutputChunk,
        )
    },
    i.AuthMethodAgent: "AuthMethod",
    i.AuthMethodTerminal: "AuthMethod",
    s.McpServerStdio: "McpServer",
    s.McpServerHttp: "McpServer",
    tc.Diff: "ToolCallContent",
    tc.ToolCallUpdateFields: "ToolCallUpdate",
    tc.BackgroundTerminal: "BackgroundWork",
    tc.BackgroundToolCall: "BackgroundWork",
    cf.SessionConfigSelect: "SessionConfigOption",
    cf.SessionConfigBoolean: "SessionConfigOption",
    cf.SessionConfigSelectOption: ("SessionConfigSelectOption", "SessionConfigSelectGroup"),
    su.AvailableCommand: "AvailableCommand",
    su.TextCommandInput: "AvailableCommandInput",
    c.ToolCallPermissionSubject: "RequestPermissionSubject",
    c.CommandPermissionSubject: "RequestPermissionSubject",
    u.ForkingSessionCapabilities: "SessionCapabilities",
    u.NewSessionWithPrompt: "NewSessionRequest",
    u.ResumeSessionWithPrompt: "ResumeSessionRequest",
}

# The defs whose properties are exactly the class's fields, where that is not the def of its
# name. "Name:own" takes only Name's top-level properties.
SHAPES: dict[type, tuple[str, ...]] = {
    su.UserMessageChunk: ("ContentChunk",),
    su.AgentMessageChunk: ("ContentChunk",),
    su.AgentThoughtChunk: ("ContentChunk",),
    su.AvailableCommand: ("Command",),
    tc.ToolCallUpdateFields: ("ToolCallUpdate",),
    cf.SessionConfigSelect: ("SessionConfigSelect", "SessionConfigOption:own"),
    cf.SessionConfigBoolean: ("SessionConfigBoolean", "SessionConfigOption:own"),
    cf.SessionConfigSelectOption: ("SessionConfigSelectOption", "SessionConfigSelectGroup"),
    u.ForkingSessionCapabilities: ("SessionCapabilities",),
    u.NewSessionWithPrompt: ("NewSessionRequest",),
    u.ResumeSessionWithPrompt: ("ResumeSessionRequest",),
}

NEWER_THAN_THE_SCHEMA: dict[type, set[str]] = {
    # rfds/v2/session-replay-complete; the Rust schema's `ReplayComplete` (only `_meta`).
    su.ReplayComplete: {"_meta"},
}
"""Types the 2.4.0 schema lacks, with their members from the newer spec text."""

# v1 types v2 uses unchanged, with the v2 def each stands for.
REUSED: dict[type, str] = {
    i1.Implementation: "Implementation",
    i1.ElicitationCapabilities: "ElicitationCapabilities",
    mcp.EnvVariable: "EnvVariable",
    mcp.HttpHeader: "HttpHeader",
    c1.PermissionOption: "PermissionOption",
    c1.RequestPermissionResponse: "RequestPermissionResponse",
    c1.SelectedPermissionOutcome: "SelectedPermissionOutcome",
    c1.TerminalExitStatus: "TerminalExitStatus",
    tc1.ContentToolCallContent: "Content",
    tc1.TerminalToolCallContent: "Terminal",
    tc1.ToolCallLocation: "ToolCallLocation",
    su1.PlanEntry: "PlanEntry",
    po.PlanItems: "PlanItems",
    po.PlanUpdate: "PlanUpdate",
    su1.SessionInfoUpdate: "SessionInfoUpdate",
    su1.UsageUpdate: "UsageUpdate",
    su1.Cost: "Cost",
    su1.Notice: "Notice",
    su1.CompactionUpdate: "CompactionUpdate",
    su1.CompactionSummaryChunk: "CompactionSummaryChunk",
    s1.ListSessionsRequest: "ListSessionsRequest",
    s1.ListSessionsResponse: "ListSessionsResponse",
    s1.SessionInfo: "SessionInfo",
    s1.DeleteSessionRequest: "DeleteSessionRequest",
    s1.DeleteSessionResponse: "DeleteSessionResponse",
    s1.CloseSessionRequest: "CloseSessionRequest",
    s1.CloseSessionResponse: "CloseSessionResponse",
    s1.CancelNotification: "CancelSessionNotification",
    s1.PromptRequest: "PromptRequest",
    s1.SetSessionConfigOptionRequest: "SetSessionConfigOptionRequest",
    el.CreateElicitationRequest: "CreateElicitationRequest",
    el.CreateElicitationResponse: "CreateElicitationResponse",
    el.CompleteElicitationNotification: "CompleteElicitationNotification",
    el.ElicitationSchema: "ElicitationSchema",
    el.EnumOption: "EnumOption",
    ct.TextContent: "TextContent",
    ct.ImageContent: "ImageContent",
    ct.AudioContent: "AudioContent",
    ct.ResourceLink: "ResourceLink",
    ct.EmbeddedResource: "EmbeddedResource",
    ct.Annotations: "Annotations",
    CancelRequestNotification: "CancelRequestNotification",
}
REUSED_UNSTABLE: dict[type, str] = {
    sp.SystemPrompt: "SystemPrompt",
    sp.SessionSystemPromptCapabilities: "SessionSystemPromptCapabilities",
    sp.SessionSystemPromptModeCapabilities: "SessionSystemPromptModeCapabilities",
    sp.SessionSystemPromptOverrideCapabilities: "SessionSystemPromptOverrideCapabilities",
    un1.SessionForkCapabilities: "SessionForkCapabilities",
}
NOT_SENT_AS_IN_V1: dict[type, tuple[Callable[[Any], bool], str]] = {
    s1.SetSessionConfigOptionRequest: (
        lambda e: e.type is not UNSET,
        "v2 requires `type` (`id` or `boolean`); a v1-style request without it is still decoded"
        " (its string value as an id), as the migration page reads",
    ),
    CancelRequestNotification: (
        lambda e: e.request_id is not None,
        "v2 request ids are never null; ours are integers",
    ),
    el.CreateElicitationRequest: (
        lambda e: e.requested_schema is UNSET or e.requested_schema.type is not UNSET,
        "v2 requires the form's `type` and `properties`: the v2 form asker sets both",
    ),
    el.ElicitationSchema: (
        lambda e: e.type is not UNSET and e.properties,
        "v2 requires `type` and `properties`: the v2 form asker sets both",
    ),
}
"""Reused v1 types whose v1 examples include shapes v2 refuses: the v1 examples v2 accepts,
and why the others are never sent (or only received) on v2."""
SENDER_SETS: dict[type, set[str]] = {el.ElicitationSchema: {"type", "properties"}}
"""Members v2 requires that the v1 type leaves optional: the v2 sender always sets them."""
SUBSET_OF_THE_DEFINITION: dict[type, str] = {
    u.ForkingSessionCapabilities: "the unstable archive, status and title markers: not offered",
}
"""v2 types with fewer members than their definition, and why."""
TAGGED_UPDATES = {su1.SessionInfoUpdate, su1.UsageUpdate, su1.Notice, po.PlanUpdate}
TAGGED_UPDATES |= {su1.CompactionUpdate, su1.CompactionSummaryChunk}


def v2_types() -> dict[str, type]:
    """Every public Wire class defined in an `acp_protocol.v2` module."""
    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(acp_protocol.v2.__path__, "acp_protocol.v2."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, Wire)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
                and obj.__name__ == name
            ):
                found[f"{module.__name__}.{name}"] = obj
    return found


V2_TYPES = v2_types()
ALL_EXAMPLES = [(e, STABLE) for e in EXAMPLES] + [(e, UNSTABLE) for e in UNSTABLE_EXAMPLES]


def schema_of(cls: type) -> V2Schema:
    return UNSTABLE if cls.__module__ == "acp_protocol.v2.unstable" else STABLE


def validated_as(cls: type) -> tuple[str, ...]:
    target = VALIDATED_AS.get(cls, cls.__name__)
    return target if isinstance(target, tuple) else (target,)


def encoded(example: msgspec.Struct) -> Any:
    return msgspec.json.decode(msgspec.json.encode(example))


def test_the_walk_finds_the_types() -> None:
    assert len(V2_TYPES) > 60


@pytest.mark.parametrize("qualname", sorted(V2_TYPES))
def test_every_type_has_an_example(qualname: str) -> None:
    cls = V2_TYPES[qualname]
    assert any(type(e) is cls for e, _ in ALL_EXAMPLES), f"add an example of {qualname}"


@pytest.mark.parametrize(
    ("example", "schema"),
    ALL_EXAMPLES,
    ids=[f"{n}-{type(e).__name__}" for n, (e, _) in enumerate(ALL_EXAMPLES)],
)
def test_example_is_valid_exact_and_round_trips(example: Wire, schema: V2Schema) -> None:
    names = validated_as(type(example))
    value = encoded(example)
    assert schema.errors(value, *names) == []
    unknown = [schema.unknown_keys(value, {"$ref": f"#/$defs/{name}"}) for name in names]
    assert [] in unknown, f"members the v2 schema does not declare: {unknown}"
    assert msgspec.json.decode(msgspec.json.encode(example), type=type(example)) == example


def _fields(cls: type) -> set[str]:
    return {f.encode_name for f in msgspec.structs.fields(cls)}


def _required(cls: type) -> set[str]:
    return {
        f.encode_name
        for f in msgspec.structs.fields(cls)
        if f.default is msgspec.NODEFAULT and f.default_factory is msgspec.NODEFAULT
    }


def _properties(cls: type, schema: V2Schema) -> set[str]:
    if cls in NEWER_THAN_THE_SCHEMA:
        return NEWER_THAN_THE_SCHEMA[cls]
    found: set[str] = set()
    for name in SHAPES.get(cls, (cls.__name__,)):
        if name.endswith(":own"):
            found |= set(schema.defs[name.removesuffix(":own")]["properties"])
        else:
            found |= schema.properties(name)
    return found


@pytest.mark.parametrize("qualname", sorted(V2_TYPES))
def test_fields_are_the_schema_properties(qualname: str) -> None:
    """No v2 property is missing from the class, and the class adds none."""
    cls = V2_TYPES[qualname]
    tag_field = cls.__struct_config__.tag_field
    expected = _properties(cls, schema_of(cls)) - {tag_field}
    if cls in SUBSET_OF_THE_DEFINITION:
        assert _fields(cls) < expected
    else:
        assert _fields(cls) == expected


@pytest.mark.parametrize("qualname", sorted(V2_TYPES))
def test_required_fields_are_the_schema_required(qualname: str) -> None:
    cls = V2_TYPES[qualname]
    if cls in NEWER_THAN_THE_SCHEMA:
        return
    schema = schema_of(cls)
    names = [n.removesuffix(":own") for n in SHAPES.get(cls, (cls.__name__,))]
    required = set().union(*(schema.required(n) for n in names))
    if not (cls in SHAPES and len(names) > 1 and cls is cf.SessionConfigSelectOption):
        assert required <= _required(cls)
    own_required = _required(cls) - required
    # What the class requires beyond its def: the members its variants require (a merged
    # union such as `state`, `operation`), never an optional property.
    variant_required = {
        key
        for name in names
        for part in schema.expand({"$ref": f"#/$defs/{name}"})
        if "not" not in part
        for key in part.get("required", [])
    }
    assert own_required <= variant_required


@pytest.mark.parametrize("qualname", sorted(V2_TYPES))
def test_examples_use_every_field(qualname: str) -> None:
    cls = V2_TYPES[qualname]
    used = {key for e, _ in ALL_EXAMPLES if type(e) is cls for key in encoded(e)}
    assert _fields(cls) - used == set()


@pytest.mark.parametrize("cls", [*REUSED, *REUSED_UNSTABLE], ids=lambda cls: cls.__name__)
def test_reused_v1_types_fit_the_v2_definitions(cls: type) -> None:
    """Every member of the v1 type is a v2 property, every v2-required one is required, and
    v1's examples of it validate against the v2 definition."""
    schema = UNSTABLE if cls in REUSED_UNSTABLE else STABLE
    name = REUSED.get(cls) or REUSED_UNSTABLE[cls]
    tag_field = cls.__struct_config__.tag_field
    assert _fields(cls) <= schema.properties(name) - {tag_field}
    assert schema.required(name) - SENDER_SETS.get(cls, set()) <= _required(cls)
    examples = [e for e in V1_EXAMPLES if type(e) is cls]
    if cls in NOT_SENT_AS_IN_V1:
        examples = [e for e in examples if NOT_SENT_AS_IN_V1[cls][0](e)]
    if cls in (po.PlanItems, po.PlanUpdate, *REUSED_UNSTABLE):  # v1's newer-type examples
        examples = examples or [_newer_example(cls)]
    assert examples, f"no v1 example of {cls.__name__}"
    target = UPDATES if cls in TAGGED_UPDATES else name
    for example in examples:
        assert schema.errors(encoded(example), target) == []


def _newer_example(cls: type) -> Wire:
    items = po.PlanItems(
        plan_id="todo",
        entries=[su1.PlanEntry(content="a", priority="high", status="pending")],
    )
    made: dict[type, Wire] = {
        po.PlanItems: items,
        po.PlanUpdate: po.PlanUpdate(plan=items),
        sp.SystemPrompt: sp.SystemPrompt(mode="append", content=[ct.TextContent(text="x")]),
        sp.SessionSystemPromptCapabilities: sp.SessionSystemPromptCapabilities(
            mode=sp.SessionSystemPromptModeCapabilities()
        ),
        sp.SessionSystemPromptModeCapabilities: sp.SessionSystemPromptModeCapabilities(
            override=sp.SessionSystemPromptOverrideCapabilities()
        ),
        sp.SessionSystemPromptOverrideCapabilities: sp.SessionSystemPromptOverrideCapabilities(),
        un1.SessionForkCapabilities: un1.SessionForkCapabilities(),
    }
    return made[cls]


# --- the method table ------------------------------------------------------------------------


def _same_shape(cls: type, name: str, schema: V2Schema) -> None:
    tag_field = cls.__struct_config__.tag_field
    assert _fields(cls) <= schema.properties(name) - {tag_field}, (cls, name)
    assert schema.required(name) <= _required(cls), (cls, name)


def _schema_of_type(cls: type) -> V2Schema:
    """A row's type is checked against the unstable schema when it widens a stable one with
    an unstable member (`systemPrompt`)."""
    return UNSTABLE if cls.__module__ == "acp_protocol.v2.unstable" else STABLE


def test_the_stable_rows_are_the_stable_schemas_methods() -> None:
    methods = STABLE.methods()
    stable = {name: row for name, row in METHODS.items() if row.origin == "stable"}
    assert sorted(stable) == sorted(methods)
    for name, row in stable.items():
        expected = methods[name]
        assert row.name == name
        assert {row.direction} == expected["side"]
        assert row.is_notification == (expected["result"] is None)
        _same_shape(row.params, expected["params"], _schema_of_type(row.params))
        if row.result is not None:
            _same_shape(row.result, expected["result"], _schema_of_type(row.result))


def test_the_other_rows_are_the_unstable_schemas_or_extensions() -> None:
    methods = UNSTABLE.methods()
    for name, row in METHODS.items():
        if row.origin == "unstable":
            assert name not in STABLE.methods()
            expected = methods[name]
            assert {row.direction} == expected["side"]
            _same_shape(row.params, expected["params"], UNSTABLE)
            assert row.result is not None
            _same_shape(row.result, expected["result"], UNSTABLE)
        elif row.origin == "extension":
            assert name.startswith("_")


def test_a_method_that_kept_v1s_types_is_v1s_row() -> None:
    """One row per shape: a handler both wires share is routed by the same row."""
    for name, row in METHODS.items():
        v1 = V1_METHODS.get(name)
        if v1 is not None and (v1.params, v1.result) == (row.params, row.result):
            assert row is v1, name


def test_the_update_union_is_the_schemas_plus_replay_complete() -> None:
    variants = STABLE.defs[UPDATES]["anyOf"]
    tags = {
        v["properties"]["sessionUpdate"]["const"]
        for v in variants
        if "const" in v["properties"]["sessionUpdate"]
    }
    union = msgspec.inspect.type_info(su.SessionUpdate)
    assert isinstance(union, msgspec.inspect.UnionType)
    ours = {t.tag for t in union.types if isinstance(t, msgspec.inspect.StructType)}
    assert ours == tags | {"replay_complete"}


# --- patches ---------------------------------------------------------------------------------


def test_omitted_null_and_a_value_encode_distinctly() -> None:
    """Upserts: UNSET is "unchanged" (left out), None is "cleared" (null), a value replaces."""
    assert encoded(tc.ToolCallUpdate(tool_call_id="c")) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
    }
    assert encoded(tc.ToolCallUpdate(tool_call_id="c", title=None, content=None))["title"] is None
    assert encoded(tc.ToolCallUpdate(tool_call_id="c", content=[]))["content"] == []
    assert "content" not in encoded(su.AgentMessage(message_id="m"))
    assert encoded(su.AgentMessage(message_id="m", content=None))["content"] is None
    assert encoded(tc.TerminalUpdate(terminal_id="t", exit_status=None))["exitStatus"] is None


def test_a_stop_reason_belongs_to_an_idle_state_only() -> None:
    with pytest.raises(ValueError, match="idle"):
        su.StateUpdate(state="running", stop_reason="end_turn")
    with pytest.raises(ValueError, match="error"):
        su.StateUpdate(state="idle", stop_reason="end_turn", error=None)


def test_an_mcp_server_of_an_unknown_transport_is_refused_when_decoded() -> None:
    with pytest.raises(msgspec.ValidationError, match="sse"):
        msgspec.json.decode(
            b'{"cwd": "/w", "mcpServers": [{"type": "sse", "name": "x", "url": "http://h"}]}',
            type=s.NewSessionRequest,
        )


def test_a_replay_cursor_of_any_type_decodes_for_the_handler_to_judge() -> None:
    resume = msgspec.json.decode(
        b'{"sessionId": "s", "cwd": "/w", "replayFrom": {"type": "messageId", "id": "m"}}',
        type=s.ResumeSessionRequest,
    )
    assert isinstance(resume.replay_from, s.ReplayFrom)
    assert resume.replay_from.type == "messageId"
