"""The unstable schema's types this agent implements (`acp_protocol/unstable.py`) encode to JSON
that `schema.unstable.json` accepts, with exactly its properties, and decode back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator

from acp_protocol import unstable as u
from acp_protocol.content import TextContent
from acp_protocol.mcp import McpServer
from acp_protocol.session_config import SessionMode, SessionModeState
from acp_protocol.system_prompt import SystemPrompt

SCHEMA = json.loads(
    (Path(__file__).resolve().parent.parent / "data" / "acp" / "schema.unstable.json").read_text()
)
META = {"trace": "x"}

EXAMPLES: list[tuple[msgspec.Struct, str]] = [
    (u.SessionForkCapabilities(), "SessionForkCapabilities"),
    (u.SessionForkCapabilities(meta=META), "SessionForkCapabilities"),
    (u.ForkingSessionCapabilities(fork=u.SessionForkCapabilities()), "SessionCapabilities"),
    (u.ForkSessionRequest(session_id="sess_1", cwd="/w"), "ForkSessionRequest"),
    (
        u.ForkSessionRequest(
            session_id="sess_1",
            cwd="/w",
            mcp_servers=[
                McpServer(name="web", type="http", url="http://127.0.0.1/mcp", headers=[])
            ],
            additional_directories=["/x"],
            system_prompt=SystemPrompt(mode="append", content=[TextContent(text="Be brief.")]),
            meta=META,
        ),
        "ForkSessionRequest",
    ),
    (u.ForkSessionResponse(session_id="sess_2"), "ForkSessionResponse"),
    (
        u.ForkSessionResponse(
            session_id="sess_2",
            modes=SessionModeState(
                current_mode_id="default", available_modes=[SessionMode(id="default", name="A")]
            ),
            config_options=[],
            meta=META,
        ),
        "ForkSessionResponse",
    ),
]


def errors(value: Any, name: str) -> list[str]:
    validator = Draft202012Validator(
        {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{name}"}
    )
    return [e.message for e in validator.iter_errors(value)]


@pytest.mark.parametrize(("example", "name"), EXAMPLES)
def test_examples_are_valid_and_round_trip(example: msgspec.Struct, name: str) -> None:
    value = json.loads(msgspec.json.encode(example))
    assert errors(value, name) == []
    assert set(value) <= set(SCHEMA["$defs"][name]["properties"])
    assert msgspec.json.decode(msgspec.json.encode(example), type=type(example)) == example


@pytest.mark.parametrize(
    "cls", [u.SessionForkCapabilities, u.ForkSessionRequest, u.ForkSessionResponse]
)
def test_fields_are_the_schema_properties(cls: type) -> None:
    fields = {f.encode_name for f in msgspec.structs.fields(cls)}
    assert fields == set(SCHEMA["$defs"][cls.__name__]["properties"])


def test_the_fork_capability_is_the_unstable_schema_s() -> None:
    assert "fork" in SCHEMA["$defs"]["SessionCapabilities"]["properties"]
