"""Every wire type encodes to JSON the official schema accepts, and every concrete object type
of the schema has a wire type."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import msgspec
import pytest

import acp_protocol
from acp_protocol import client as c
from acp_protocol import content as ct
from acp_protocol import elicitation as el
from acp_protocol import mcp
from acp_protocol import session_config as sc
from acp_protocol import session_update as su
from acp_protocol import tool_call as tc
from acp_protocol.base import Wire
from acp_protocol.initialize import AuthMethod
from acp_protocol.jsonrpc import ErrorObject
from tests.support.acp_schema import (
    DEFS,
    all_properties,
    is_concrete_object,
    ref,
    schema_errors,
)
from tests.support.acp_schema import unknown_keys as find_unknown_keys
from tests.support.protocol_examples import EXAMPLES

# Modules not walked: `jsonrpc` holds the JSON-RPC envelopes (owned elsewhere, and not $defs of
# the ACP schema except `Error`, checked separately below).
SKIPPED_MODULES = {
    "acp_protocol.jsonrpc",
    "acp_protocol.unstable",
    "acp_protocol.usage",
    "acp_protocol.system_prompt",
    "acp_protocol.plan_operations",
    "acp_protocol.newer",
    "acp_protocol.subagents",
    "acp_protocol.session_rewind",
}
"""jsonrpc: the envelope, checked below; unstable: against the unstable schema
(tests/protocol/test_unstable.py); usage (and the other types newer than the stable
schema): against the unstable schema and the docs (tests/protocol/test_newer.py);
session_rewind: an extension in neither schema (its wire form: tests/e2e/test_rewind_acp.py)."""

# Where a class's encoded form means something other than the schema def of the same name.
# A tuple means "valid against any of these" (one Struct merging an untagged union).
SCHEMA_DEF: dict[type, str | tuple[str, ...]] = {
    **{
        cls: "ContentBlock"
        for cls in (
            ct.TextContent,
            ct.ImageContent,
            ct.AudioContent,
            ct.ResourceLink,
            ct.EmbeddedResource,
        )
    },
    ct.ResourceContents: "EmbeddedResourceResource",
    **{
        cls: "ToolCallContent"
        for cls in (tc.ContentToolCallContent, tc.DiffToolCallContent, tc.TerminalToolCallContent)
    },
    tc.ToolCallUpdateFields: "ToolCallUpdate",
    **{
        cls: "SessionUpdate"
        for cls in (
            su.UserMessageChunk,
            su.AgentMessageChunk,
            su.AgentThoughtChunk,
            tc.ToolCall,
            tc.ToolCallUpdate,
            su.Plan,
            su.AvailableCommandsUpdate,
            su.CurrentModeUpdate,
            su.ConfigOptionUpdate,
            su.SessionInfoUpdate,
            su.UsageUpdate,
            su.Notice,
            su.CompactionUpdate,
            su.CompactionSummaryChunk,
        )
    },
    su.UnstructuredCommandInput: "AvailableCommandInput",
    sc.SessionConfigSelect: "SessionConfigOption",
    sc.SessionConfigBoolean: "SessionConfigOption",
    sc.SessionConfigSelectOption: ("SessionConfigSelectOption", "SessionConfigSelectGroup"),
    c.SelectedPermissionOutcome: "RequestPermissionOutcome",
    c.CancelledPermissionOutcome: "RequestPermissionOutcome",
    **{
        cls: "ElicitationPropertySchema"
        for cls in (
            el.StringPropertySchema,
            el.NumberPropertySchema,
            el.IntegerPropertySchema,
            el.BooleanPropertySchema,
            el.MultiSelectPropertySchema,
        )
    },
}

# Schema defs that are variants or fragments of a union: represented by a class whose examples
# must include at least one that is valid against the def on its own.
FRAGMENT_DEFS: dict[str, type] = {
    "TextContent": ct.TextContent,
    "ImageContent": ct.ImageContent,
    "AudioContent": ct.AudioContent,
    "ResourceLink": ct.ResourceLink,
    "EmbeddedResource": ct.EmbeddedResource,
    "TextResourceContents": ct.ResourceContents,
    "BlobResourceContents": ct.ResourceContents,
    "Content": tc.ContentToolCallContent,
    "Diff": tc.DiffToolCallContent,
    "Terminal": tc.TerminalToolCallContent,
    "ContentChunk": su.AgentMessageChunk,
    "ToolCall": tc.ToolCall,
    "Plan": su.Plan,
    "AvailableCommandsUpdate": su.AvailableCommandsUpdate,
    "CurrentModeUpdate": su.CurrentModeUpdate,
    "ConfigOptionUpdate": su.ConfigOptionUpdate,
    "SessionInfoUpdate": su.SessionInfoUpdate,
    "UsageUpdate": su.UsageUpdate,
    "Notice": su.Notice,
    "CompactionUpdate": su.CompactionUpdate,
    "CompactionSummaryChunk": su.CompactionSummaryChunk,
    "UnstructuredCommandInput": su.UnstructuredCommandInput,
    "SessionConfigSelect": sc.SessionConfigSelect,
    "SessionConfigBoolean": sc.SessionConfigBoolean,
    "SessionConfigSelectOption": sc.SessionConfigSelectOption,
    "SessionConfigSelectGroup": sc.SessionConfigSelectOption,
    "SelectedPermissionOutcome": c.SelectedPermissionOutcome,
    "McpServerStdio": mcp.McpServer,
    "McpServerHttp": mcp.McpServer,
    "McpServerSse": mcp.McpServer,
    "AuthMethodAgent": AuthMethod,
    "AuthMethodTerminal": AuthMethod,
    "StringPropertySchema": el.StringPropertySchema,
    "NumberPropertySchema": el.NumberPropertySchema,
    "IntegerPropertySchema": el.IntegerPropertySchema,
    "BooleanPropertySchema": el.BooleanPropertySchema,
    "MultiSelectPropertySchema": el.MultiSelectPropertySchema,
    "StringMultiSelectItems": el.MultiSelectItems,
    "TitledMultiSelectItems": el.MultiSelectItems,
    "ElicitationFormMode": el.CreateElicitationRequest,
    "ElicitationUrlMode": el.CreateElicitationRequest,
    "ElicitationSessionScope": el.CreateElicitationRequest,
    "ElicitationRequestScope": el.CreateElicitationRequest,
    "ElicitationAcceptAction": el.CreateElicitationResponse,
}

# Concrete object defs with no wire type here, and why.
EXCLUDED_DEFS: dict[str, str] = {
    "AgentRequest": "JSON-RPC envelope (protocol/jsonrpc.py)",
    "ClientRequest": "JSON-RPC envelope (protocol/jsonrpc.py)",
    "AgentNotification": "JSON-RPC envelope (protocol/jsonrpc.py)",
    "ClientNotification": "JSON-RPC envelope (protocol/jsonrpc.py)",
    "Error": "the error member of a response: acp_protocol.jsonrpc.ErrorObject (tested below)",
}


# The defs whose properties are exactly a class's fields, where that is not the class's own
# def (or, failing that, its SCHEMA_DEF). "Name:own" takes only Name's top-level properties.
SHAPE_DEFS: dict[type, tuple[str, ...]] = {
    tc.ContentToolCallContent: ("Content",),
    tc.DiffToolCallContent: ("Diff",),
    tc.TerminalToolCallContent: ("Terminal",),
    su.UserMessageChunk: ("ContentChunk",),
    su.AgentMessageChunk: ("ContentChunk",),
    su.AgentThoughtChunk: ("ContentChunk",),
    sc.SessionConfigSelectOption: ("SessionConfigSelectOption", "SessionConfigSelectGroup"),
    sc.SessionConfigSelect: ("SessionConfigSelect", "SessionConfigOption:own"),
    sc.SessionConfigBoolean: ("SessionConfigBoolean", "SessionConfigOption:own"),
    c.CancelledPermissionOutcome: (),  # the "cancelled" branch has only the tag
}


def wire_types() -> dict[str, Any]:
    """Every public Struct class defined in a `protocol` module, found by walking the package."""
    found: dict[str, Any] = {}
    for info in pkgutil.iter_modules(acp_protocol.__path__, "acp_protocol."):
        if info.name in SKIPPED_MODULES:
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, msgspec.Struct)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
                and obj.__name__ == name  # not an alias of a class listed under its own name
                and obj is not Wire
            ):
                found[f"{module.__name__}.{name}"] = obj
    return found


WIRE_TYPES = wire_types()


def schema_def_names(cls: type) -> tuple[str, ...]:
    target = SCHEMA_DEF.get(cls, cls.__name__)
    return target if isinstance(target, tuple) else (target,)


def encoded(example: msgspec.Struct) -> Any:
    return msgspec.json.decode(msgspec.json.encode(example))


def examples_of(cls: type) -> list[Wire]:
    return [example for example in EXAMPLES if type(example) is cls]


def test_walk_finds_the_types() -> None:
    assert len(WIRE_TYPES) > 100
    assert all(issubclass(cls, Wire) for cls in WIRE_TYPES.values())


@pytest.mark.parametrize("qualname", sorted(WIRE_TYPES))
def test_every_type_has_an_example(qualname: str) -> None:
    cls = WIRE_TYPES[qualname]
    assert examples_of(cls), f"add an example of {qualname} to protocol_examples.py"
    for name in schema_def_names(cls):
        assert name in DEFS, f"{qualname} maps to unknown schema def {name}"


@pytest.mark.parametrize(
    "example", EXAMPLES, ids=[f"{i}-{type(e).__name__}" for i, e in enumerate(EXAMPLES)]
)
def test_example_is_valid_and_round_trips(example: Wire) -> None:
    names = schema_def_names(type(example))
    value = encoded(example)
    assert schema_errors(value, *names) == []
    unknown = [find_unknown_keys(value, ref(name)) for name in names]
    assert [] in unknown, f"members not declared by schema def {names}: {unknown}"
    assert msgspec.json.decode(msgspec.json.encode(example), type=type(example)) == example


def schema_properties(cls: type) -> set[str]:
    if cls in SHAPE_DEFS:
        names = SHAPE_DEFS[cls]
    else:
        names = (cls.__name__,) if cls.__name__ in DEFS else schema_def_names(cls)
    found: set[str] = set()
    for name in names:
        if name.endswith(":own"):
            found |= set(DEFS[name.removesuffix(":own")]["properties"])
        else:
            found |= all_properties(ref(name))
    return found


@pytest.mark.parametrize("qualname", sorted(WIRE_TYPES))
def test_fields_match_schema_properties(qualname: str) -> None:
    """No schema property is missing from the class, and the class adds none."""
    cls = WIRE_TYPES[qualname]
    fields = {f.encode_name for f in msgspec.structs.fields(cls)}
    tag_field = cls.__struct_config__.tag_field
    assert fields == schema_properties(cls) - {tag_field}


@pytest.mark.parametrize("qualname", sorted(WIRE_TYPES))
def test_examples_use_every_field(qualname: str) -> None:
    """Some example of each class sets each field (so every field is validated)."""
    cls = WIRE_TYPES[qualname]
    used = {key for example in examples_of(cls) for key in encoded(example)}
    fields = {f.encode_name for f in msgspec.structs.fields(cls)}
    assert fields - used == set()


@pytest.mark.parametrize("name", sorted(FRAGMENT_DEFS))
def test_fragment_defs_are_covered(name: str) -> None:
    cls = FRAGMENT_DEFS[name]
    assert any(schema_errors(encoded(e), name) == [] for e in examples_of(cls)), (
        f"no example of {cls.__name__} is valid against $defs/{name}"
    )


def test_every_concrete_object_def_is_represented() -> None:
    represented = {name for cls in WIRE_TYPES.values() for name in schema_def_names(cls)}
    missing = [
        name
        for name, definition in DEFS.items()
        if is_concrete_object(definition)
        and name not in represented
        and name not in FRAGMENT_DEFS
        and name not in EXCLUDED_DEFS
    ]
    assert missing == []


def test_mapping_tables_are_not_stale() -> None:
    for name in [*FRAGMENT_DEFS, *EXCLUDED_DEFS]:
        assert name in DEFS
    for cls in [*SCHEMA_DEF, *SHAPE_DEFS, *FRAGMENT_DEFS.values()]:
        assert cls in WIRE_TYPES.values()


def test_jsonrpc_error_object_matches_error_def() -> None:
    value = encoded(ErrorObject(code=-32602, message="Invalid params", data={"field": "cwd"}))
    assert schema_errors(value, "Error") == []
    assert schema_errors(encoded(ErrorObject(code=-32800, message="Cancelled")), "Error") == []
