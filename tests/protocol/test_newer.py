"""Wire types newer than the stable schema we vendored (`acp_protocol/usage.py`, ...): each
encodes to JSON that the unstable schema (tests/data/acp/schema.unstable.json, the newest we
have) accepts, has exactly that def's properties, and decodes back; examples are written from
the doc pages cited in tests/data/acp/newer_fields.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_protocol import newer as nw
from acp_protocol import plan_operations as po
from acp_protocol import subagents as sa
from acp_protocol import system_prompt as sp
from acp_protocol import usage as u
from acp_protocol.content import TextContent
from acp_protocol.initialize import FileSystemCapabilities, SessionListCapabilities
from acp_protocol.session_update import AgentMessageChunk, PlanEntry
from acp_protocol.tool_call import ContentToolCallContent
from tests.support.newer_types import field_problems, unstable_problems

SCHEMA = json.loads(
    (Path(__file__).resolve().parent.parent / "data" / "acp" / "schema.unstable.json").read_text()
)
DEFS = SCHEMA["$defs"]
META = {"trace": "x"}
MINIMAL: dict[str, dict[str, Any]] = {"NewSessionRequest": {"cwd": "/w", "mcpServers": []}}

# (example, unstable schema def, field list of newer_fields.json or None)
EXAMPLES: list[tuple[msgspec.Struct, str, str | None]] = [
    # agentclientprotocol.com/rfds/end-turn-token-usage: the v1 example
    (
        u.Usage(
            total_tokens=53000,
            input_tokens=35000,
            output_tokens=12000,
            thought_tokens=5000,
            cached_read_tokens=5000,
            cached_write_tokens=1000,
            meta=META,
        ),
        "Usage",
        "Usage",
    ),
    (u.Usage(total_tokens=3, input_tokens=2, output_tokens=1), "Usage", "Usage"),
    (
        u.Usage(
            total_tokens=3,
            input_tokens=2,
            output_tokens=1,
            thought_tokens=None,
            cached_read_tokens=None,
            cached_write_tokens=None,
        ),
        "Usage",
        "Usage",
    ),
    (u.PromptResponse(stop_reason="cancelled"), "PromptResponse", None),
    (
        u.PromptResponse(
            stop_reason="end_turn",
            usage=u.Usage(total_tokens=3, input_tokens=2, output_tokens=1),
            meta=META,
        ),
        "PromptResponse",
        None,
    ),
    (u.PromptResponse(stop_reason="max_tokens", usage=None), "PromptResponse", None),
    # agentclientprotocol.com/protocol/v1/session-setup#system-prompt
    (
        sp.SystemPrompt(mode="append", content=[TextContent(text="Prefer small diffs.")]),
        "SystemPrompt",
        None,
    ),
    (
        sp.SystemPrompt(
            mode="override",
            content=[TextContent(text="You review code."), TextContent(text="Be terse.")],
            meta=META,
        ),
        "SystemPrompt",
        None,
    ),
    (
        sp.SessionSystemPromptOverrideCapabilities(meta=META),
        "SessionSystemPromptOverrideCapabilities",
        None,
    ),
    (
        sp.SessionSystemPromptModeCapabilities(),
        "SessionSystemPromptModeCapabilities",
        "SessionSystemPromptModeCapabilities",
    ),
    (
        sp.SessionSystemPromptModeCapabilities(
            override=sp.SessionSystemPromptOverrideCapabilities(), meta=META
        ),
        "SessionSystemPromptModeCapabilities",
        "SessionSystemPromptModeCapabilities",
    ),
    (
        sp.SessionSystemPromptModeCapabilities(override=None),
        "SessionSystemPromptModeCapabilities",
        None,
    ),
    (
        sp.SessionSystemPromptCapabilities(),
        "SessionSystemPromptCapabilities",
        "SessionSystemPromptCapabilities",
    ),
    (
        sp.SessionSystemPromptCapabilities(
            mode=sp.SessionSystemPromptModeCapabilities(
                override=sp.SessionSystemPromptOverrideCapabilities()
            ),
            meta=META,
        ),
        "SessionSystemPromptCapabilities",
        "SessionSystemPromptCapabilities",
    ),
    (sp.SessionSystemPromptCapabilities(mode=None), "SessionSystemPromptCapabilities", None),
    (
        sp.SystemPromptSessionCapabilities(
            list=SessionListCapabilities(), system_prompt=sp.SessionSystemPromptCapabilities()
        ),
        "SessionCapabilities",
        None,
    ),
    (sp.SystemPromptParams(), "NewSessionRequest:systemPrompt", None),
    (
        sp.SystemPromptParams(
            system_prompt=sp.SystemPrompt(mode="append", content=[TextContent(text="x")])
        ),
        "NewSessionRequest:systemPrompt",
        None,
    ),
    (sp.SystemPromptParams(system_prompt=None), "NewSessionRequest:systemPrompt", None),
    # agentclientprotocol.com/rfds/plan-operations, protocol/v2/draft/agent-plan
    (po.PlanCapabilities(), "PlanCapabilities", None),
    (po.PlanCapabilities(meta=META), "PlanCapabilities", None),
    (
        po.PlanItems(
            plan_id="plan-1",
            entries=[PlanEntry(content="Step 1", priority="high", status="pending")],
            meta=META,
        ),
        "PlanUpdateContent",
        "PlanItems",
    ),
    (
        po.PlanUpdate(plan=po.PlanItems(plan_id="plan-1", entries=[]), meta=META),
        "SessionUpdate",
        "plan_update",
    ),
    (po.PlanRemoved(plan_id="plan-1", meta=META), "SessionUpdate", "plan_removed"),
    (po.PlanRemoved(plan_id="plan-1"), "SessionUpdate", "plan_removed"),
    (nw.SubagentCapabilities(), "SubagentCapabilities", None),
    (nw.SubagentCapabilities(meta=META), "SubagentCapabilities", None),
    (
        nw.NewerClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True),
            plan=po.PlanCapabilities(),
            subagents=nw.SubagentCapabilities(),
        ),
        "ClientCapabilities",
        None,
    ),
    (nw.NewerClientCapabilities(plan=None, subagents=None), "ClientCapabilities", None),
    (
        nw.NewerInitializeRequest(
            protocol_version=1,
            client_capabilities=nw.NewerClientCapabilities(plan=po.PlanCapabilities()),
        ),
        "InitializeRequest",
        None,
    ),
    (
        nw.NewerSessionNotification(
            session_id="sess-1", update=po.PlanRemoved(plan_id="plan-1"), meta=META
        ),
        "SessionNotification",
        None,
    ),
    (
        nw.NewerSessionNotification(
            session_id="sess-1", update=AgentMessageChunk(content=TextContent(text="hi"))
        ),
        "SessionNotification",
        None,
    ),
    # agentclientprotocol.com/protocol/v1/subagents (announcing, state, cancel capability)
    (sa.SessionCancelCapabilities(meta=META), "SessionCancelCapabilities", None),
    (
        sa.SubagentSessionCapabilities(cancel=sa.SessionCancelCapabilities(), meta=META),
        "SubagentSessionCapabilities",
        None,
    ),
    (sa.SubagentSessionCapabilities(cancel=None), "SubagentSessionCapabilities", None),
    (sa.RunningState(meta=META), "StateUpdate", None),
    (sa.IdleState(stop_reason="cancelled", meta=META), "StateUpdate", None),
    (
        sa.SubagentUpdate(
            session_id="sess-1.task1",
            title="Survey",
            capabilities=sa.SubagentSessionCapabilities(cancel=sa.SessionCancelCapabilities()),
            state=sa.RunningState(),
            cwd="/w",
            additional_directories=["/x"],
            meta=META,
        ),
        "SessionUpdate",
        "subagent_update",
    ),
    (
        sa.SubagentUpdate(
            session_id="sess-1.task1",
            title=None,
            capabilities=None,
            state=None,
            cwd=None,
            additional_directories=None,
        ),
        "SessionUpdate",
        "subagent_update",
    ),
    (
        sa.SubagentUpdate(session_id="c", state=sa.IdleState(stop_reason="end_turn")),
        "SessionUpdate",
        "subagent_update",
    ),
]

# Newer than the unstable schema too: checked against the docs' field lists only.
DOCS_ONLY: list[tuple[msgspec.Struct, str]] = [
    (
        sa.SubagentUpdate(session_id="c", description="Look around the repository."),
        "subagent_update",
    ),
    (sa.SessionToolCallContent(session_id="c", meta=META), "SessionToolCallContent"),
    (sa.SessionToolCallContent(session_id="c"), "SessionToolCallContent"),
]


@pytest.mark.parametrize(("example", "fields"), DOCS_ONLY)
def test_docs_only_example_matches_its_field_list_and_round_trips(
    example: msgspec.Struct, fields: str
) -> None:
    assert field_problems(fields, encoded(example)) == []
    assert msgspec.json.decode(msgspec.json.encode(example), type=type(example)) == example


def test_a_linked_tool_call_update_is_the_stable_update_plus_session_content() -> None:
    linked = sa.LinkedToolCallUpdate(
        tool_call_id="call_1",
        status="completed",
        content=[
            sa.SessionToolCallContent(session_id="c"),
            ContentToolCallContent(content=TextContent(text="done")),
        ],
        locations=[],
        meta=META,
    )
    value = encoded(linked)
    assert value["content"][0] == {"type": "session", "sessionId": "c"}
    rest = {**value, "content": value["content"][1:]}
    assert unstable_problems("SessionUpdate", rest) == []
    assert msgspec.json.decode(msgspec.json.encode(linked), type=sa.LinkedToolCallUpdate) == linked


UNSTABLE_NAME: dict[type, str] = {nw.NewerSessionNotification: "SessionNotification"}

NEWER_CLASSES: list[type[msgspec.Struct]] = [
    u.Usage,
    u.PromptResponse,
    sp.SystemPrompt,
    sp.SessionSystemPromptCapabilities,
    sp.SessionSystemPromptModeCapabilities,
    sp.SessionSystemPromptOverrideCapabilities,
    po.PlanCapabilities,
    po.PlanItems,
    po.PlanRemoved,
    po.PlanUpdate,
    nw.SubagentCapabilities,
    nw.NewerSessionNotification,
    sa.SessionCancelCapabilities,
    sa.SubagentSessionCapabilities,
]
"""Classes whose fields are exactly their unstable def's properties. `SystemPromptParams` is
the `systemPrompt` member alone of the lifecycle requests (checked as a part of
`NewSessionRequest`); `SystemPromptSessionCapabilities` the stable `SessionCapabilities` plus
it (checked against the unstable `SessionCapabilities`, which has more)."""


def properties(name: str) -> set[str]:
    """Property names of an unstable def and every schema combined with it (union branches
    included)."""
    found: set[str] = set()
    stack: list[dict[str, Any]] = [DEFS[name]]
    while stack:
        current = stack.pop()
        if "$ref" in current:
            stack.append(DEFS[current["$ref"].rsplit("/", 1)[1]])
        found |= set(current.get("properties", {}))
        for key in ("allOf", "anyOf", "oneOf"):
            stack.extend(current.get(key, []))
    return found


def encoded(example: msgspec.Struct) -> Any:
    return json.loads(msgspec.json.encode(example))


@pytest.mark.parametrize(("example", "name", "fields"), EXAMPLES)
def test_example_is_valid_and_round_trips(
    example: msgspec.Struct, name: str, fields: str | None
) -> None:
    value = encoded(example)
    name, _, member = name.partition(":")
    if member:  # only that member of the def: checked inside a minimal valid instance
        value = {**MINIMAL[name], **value}
    assert unstable_problems(name, value) == []
    assert set(value) <= properties(name)
    if fields is not None:
        assert field_problems(fields, value) == []
    assert msgspec.json.decode(msgspec.json.encode(example), type=type(example)) == example


@pytest.mark.parametrize("cls", NEWER_CLASSES)
def test_fields_are_the_unstable_schema_properties(cls: type[msgspec.Struct]) -> None:
    fields = {f.encode_name for f in msgspec.structs.fields(cls)}
    tag_field = cls.__struct_config__.tag_field
    name = UNSTABLE_NAME.get(cls, cls.__name__)
    assert fields == set(DEFS[name]["properties"]) - {tag_field}


@pytest.mark.parametrize("cls", NEWER_CLASSES)
def test_examples_use_every_field(cls: type[msgspec.Struct]) -> None:
    used = {key for example, _, _ in EXAMPLES if type(example) is cls for key in encoded(example)}
    tag_field = cls.__struct_config__.tag_field
    assert used - {tag_field} == {f.encode_name for f in msgspec.structs.fields(cls)}
