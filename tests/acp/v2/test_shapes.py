"""Session-level data in v2's shapes (acp_server/acp/v2/shapes.py), from the one description
the bridge keeps: every config option (the mode among them) gets its `configId`, each command
its `command` tag and a `text` input, and every result is valid against the v2 schema. How a
v2 client is sent them: tests/acp/v2/test_view.py."""

from __future__ import annotations

import msgspec

from acp_server.acp.mode_options import available_commands, config_options
from acp_server.acp.v2.shapes import commands
from acp_server.acp.v2.shapes import config_options as v2_config_options
from tests.support.v2_schema import STABLE


def test_config_options_keep_their_values_and_take_a_config_id() -> None:
    shown = v2_config_options(config_options("read_only", "echo", ("echo", "openai:qwen")))
    encoded = msgspec.to_builtins(shown)
    assert [(o["configId"], o["currentValue"]) for o in encoded] == [
        ("mode", "read_only"),
        ("model", "echo"),
    ]
    assert [v["value"] for v in encoded[1]["options"]] == ["echo", "openai:qwen"]
    for option in encoded:
        assert STABLE.errors(option, "SessionConfigOption") == []


def test_commands_are_tagged_with_a_text_input_where_they_take_one() -> None:
    listed = msgspec.to_builtins(commands(available_commands(("echo",))))
    assert [c["name"] for c in listed] == ["mode", "compact", "rewind", "model"]
    assert all(c["type"] == "command" and c["input"]["type"] == "text" for c in listed)
    assert listed[1]["input"]["hint"] == "optional: what the summary should keep"
    for command in listed:
        assert STABLE.errors(command, "AvailableCommand") == []
