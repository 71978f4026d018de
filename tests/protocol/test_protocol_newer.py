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

from acp_protocol import system_prompt as sp
from acp_protocol import usage as u
from acp_protocol.content import TextContent
from acp_protocol.initialize import SessionListCapabilities
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
]

NEWER_CLASSES: list[type[msgspec.Struct]] = [
    u.Usage,
    u.PromptResponse,
    sp.SystemPrompt,
    sp.SessionSystemPromptCapabilities,
    sp.SessionSystemPromptModeCapabilities,
    sp.SessionSystemPromptOverrideCapabilities,
]
"""Classes whose fields are exactly their unstable def's properties. `SystemPromptParams` is
the `systemPrompt` member alone of the lifecycle requests (checked as a part of
`NewSessionRequest`); `SystemPromptSessionCapabilities` the stable `SessionCapabilities` plus
it (checked against the unstable `SessionCapabilities`, which has more)."""


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
    assert set(value) <= set(DEFS[name]["properties"])
    if fields is not None:
        assert field_problems(fields, value) == []
    assert msgspec.json.decode(msgspec.json.encode(example), type=type(example)) == example


@pytest.mark.parametrize("cls", NEWER_CLASSES)
def test_fields_are_the_unstable_schema_properties(cls: type[msgspec.Struct]) -> None:
    fields = {f.encode_name for f in msgspec.structs.fields(cls)}
    tag_field = cls.__struct_config__.tag_field
    assert fields == set(DEFS[cls.__name__]["properties"]) - {tag_field}


@pytest.mark.parametrize("cls", NEWER_CLASSES)
def test_examples_use_every_field(cls: type[msgspec.Struct]) -> None:
    used = {key for example, _, _ in EXAMPLES if type(example) is cls for key in encoded(example)}
    assert used == {f.encode_name for f in msgspec.structs.fields(cls)}
