"""The golden wire examples (from the official Python SDK's test suite) round-trip.

Comparison: decode with the protocol type, re-encode, and compare as JSON values with the
original, after `strip_defaults` on both sides. That normalization only drops members equal to
the default the schema declares for them: `omit_defaults` leaves out `false` capability flags
and the empty `authMethods`, while a capability object is always sent (`"mcpCapabilities": {}`
in `initialize_response.json` and the re-encoded `"auth": {}` are both the declared default).
Any other lost, renamed or changed member fails the comparison; `test_normalization_is_not_lossy`
checks that for every member of every golden file.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from acp_protocol import client as c
from acp_protocol import initialize as i
from acp_protocol import session as s
from acp_protocol.content import ContentBlock
from acp_protocol.session_update import SessionUpdate
from acp_protocol.tool_call import ToolCallContent
from tests.support.acp_schema import GOLDEN, ref, schema_errors, strip_defaults

# golden file stem -> (decode type, schema def name)
GOLDEN_TYPES: dict[str, tuple[Any, str]] = {
    "cancel_notification": (s.CancelNotification, "CancelNotification"),
    "fs_read_text_file_request": (c.ReadTextFileRequest, "ReadTextFileRequest"),
    "fs_read_text_file_response": (c.ReadTextFileResponse, "ReadTextFileResponse"),
    "fs_write_text_file_request": (c.WriteTextFileRequest, "WriteTextFileRequest"),
    "initialize_request": (i.InitializeRequest, "InitializeRequest"),
    "initialize_response": (i.InitializeResponse, "InitializeResponse"),
    "new_session_request": (s.NewSessionRequest, "NewSessionRequest"),
    "new_session_response": (s.NewSessionResponse, "NewSessionResponse"),
    "permission_outcome_cancelled": (c.PermissionOutcome, "RequestPermissionOutcome"),
    "permission_outcome_selected": (c.PermissionOutcome, "RequestPermissionOutcome"),
    "prompt_request": (s.PromptRequest, "PromptRequest"),
    "request_permission_request": (c.RequestPermissionRequest, "RequestPermissionRequest"),
    "request_permission_response_selected": (
        c.RequestPermissionResponse,
        "RequestPermissionResponse",
    ),
    "set_session_config_option_request": (
        s.SetSessionConfigOptionRequest,
        "SetSessionConfigOptionRequest",
    ),
    "set_session_config_option_response": (
        s.SetSessionConfigOptionResponse,
        "SetSessionConfigOptionResponse",
    ),
    **{
        f"content_{kind}": (ContentBlock, "ContentBlock")
        for kind in ("audio", "image", "resource_blob", "resource_link", "resource_text", "text")
    },
    **{
        f"session_update_{kind}": (SessionUpdate, "SessionUpdate")
        for kind in (
            "agent_message_chunk",
            "agent_thought_chunk",
            "config_option_update",
            "plan",
            "tool_call",
            "tool_call_edit",
            "tool_call_locations_rawinput",
            "tool_call_read",
            "tool_call_update_content",
            "tool_call_update_more_fields",
            "user_message_chunk",
        )
    },
    **{
        f"tool_content_{kind}": (ToolCallContent, "ToolCallContent")
        for kind in ("content_text", "diff", "diff_no_old", "terminal")
    },
}


def load(stem: str) -> Any:
    return json.loads((GOLDEN / f"{stem}.json").read_text())


def test_every_golden_file_is_mapped() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(GOLDEN_TYPES)


@pytest.mark.parametrize("stem", sorted(GOLDEN_TYPES))
def test_golden_round_trip(stem: str) -> None:
    wire_type, def_name = GOLDEN_TYPES[stem]
    original = load(stem)
    assert schema_errors(original, def_name) == []

    decoded = msgspec.json.decode((GOLDEN / f"{stem}.json").read_bytes(), type=wire_type)
    reencoded = msgspec.json.decode(msgspec.json.encode(decoded))

    schema = ref(def_name)
    assert strip_defaults(reencoded, schema) == strip_defaults(original, schema)
    assert schema_errors(reencoded, def_name) == []
    assert msgspec.json.decode(msgspec.json.encode(decoded), type=wire_type) == decoded


def test_only_initialize_needs_normalization() -> None:
    """Documents the normalization: every other golden file re-encodes to exactly itself.

    (The request gains `"auth": {}` in `clientCapabilities`, its declared default.)
    """
    needs = []
    for stem, (wire_type, _) in GOLDEN_TYPES.items():
        decoded = msgspec.json.decode((GOLDEN / f"{stem}.json").read_bytes(), type=wire_type)
        if msgspec.json.decode(msgspec.json.encode(decoded)) != load(stem):
            needs.append(stem)
    assert needs == ["initialize_request", "initialize_response"]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every object member and array item."""
    out = []
    if isinstance(value, dict):
        for key, item in value.items():
            out += [(*path, key), *_paths(item, (*path, key))]
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += [(*path, index), *_paths(item, (*path, index))]
    return out


def _without(value: Any, path: tuple[Any, ...]) -> Any:
    copy = json.loads(json.dumps(value))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return copy


@pytest.mark.parametrize("stem", sorted(GOLDEN_TYPES))
def test_normalization_is_not_lossy(stem: str) -> None:
    """Removing any member or item that is not a declared default changes the normalized value,
    so a decode that dropped it would fail `test_golden_round_trip`."""
    _, def_name = GOLDEN_TYPES[stem]
    schema = ref(def_name)
    original = load(stem)
    baseline = strip_defaults(original, schema)
    for path in _paths(original):
        if path[-1] in ("mcpCapabilities", "sessionCapabilities", "authMethods"):
            continue  # declared defaults in initialize_response.json
        assert strip_defaults(_without(original, path), schema) != baseline, path
