"""The tool list a model is sent, pinned byte for byte: every tool a session can offer
(the built-ins, `ask_user`, `skill`, `task`), as the OpenAI-style and the Anthropic-style
request carry it, in the full variant and in the compact one (a window of 8k tokens or less).

The expected lists in tests/data/tool_lists/ were written by the code of 9f22b9a, before the tool
schemas were generated from the argument Structs (issue 36); a change to what the model sees
shows here first. A purposeful difference is named here (`REORDERED`) and in the RFC
docs/rfc/implemented/architecture/2026-12-06-toolbox-and-one-entry-point.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_server.models import anthropic, openai
from acp_server.models.base import ModelRequest
from tests.support.agent_harness import FakeModel, WindowedModel, running_agent, text
from tests.support.session_tools import every_session_tool

pytestmark = pytest.mark.anyio

EXPECTED = Path(__file__).resolve().parent.parent / "data" / "tool_lists"


async def first_request(tmp_path: Path, model: FakeModel) -> ModelRequest:
    """The first request of a turn of an agent holding every tool a session can offer."""
    tools = every_session_tool(tmp_path, model)
    async with running_agent(model, tools=tools) as handle:  # type: ignore[arg-type]
        await handle.agent.followup(text("go")).wait()
    return model.requests[0]


def sent(style: str, request: ModelRequest) -> bytes:
    """The `tools` of the request body as the provider of `style` encodes it."""
    if style == "openai":
        body = openai.request_body("m", request)
    else:
        body = anthropic.request_body("m", request)
    return msgspec.json.encode(body["tools"])


REORDERED = {
    ("todo_write", "entries"): ["type", "items", "description"],
    ("ask_user", "form"): ["type", "properties", "required", "description"],
    ("task", "fork"): ["type", "default", "description"],
}
"""The purposeful differences from the expected lists (the RFC names them too): the schemas are
generated from the argument Structs (acp_server/tools/arguments.py), which puts each
property's `type` first, its `description` last and a stated default just before it. These
three properties were written by hand in another order. Same keys, same values."""


BASH_BACKGROUND = (
    "Start the command in the background and answer at once with its id (`bg_1`): for "
    "servers, watchers and long builds. It runs until it exits, bash_stop stops it, or the "
    "session ends; `timeout_ms` does not apply. Read its output with bash_output."
)
BASH_DESCRIPTION_ADDED = (
    " With `background: true` it keeps running after this call (a dev server, a watcher)."
)
"""The second purposeful difference (the RFC
docs/rfc/implemented/architecture/2026-12-06-background-work.md): `bash` gains the `background`
argument, and its description (the full variant's) one sentence. `bash_output` and
`bash_stop` are new: not pinned here."""


def as_generated(entry: dict[str, Any], variant: str = "full") -> dict[str, Any]:
    """`entry` of an expected list with the keys of `REORDERED` in the generated order, and
    `bash` with its background argument."""
    schema = entry["function"]["parameters"] if "function" in entry else entry["input_schema"]
    if name_of(entry) == "bash":
        background: dict[str, Any] = {"type": "boolean"}
        if variant == "full":
            background["description"] = BASH_BACKGROUND
            described = entry.get("function", entry)
            described["description"] += BASH_DESCRIPTION_ADDED
        schema["properties"]["background"] = background
    for (tool, prop), order in REORDERED.items():
        if name_of(entry) == tool and prop in schema["properties"]:
            spec = schema["properties"][prop]
            assert sorted(spec) == sorted(order)
            schema["properties"][prop] = {key: spec[key] for key in order}
    return entry


def name_of(entry: dict[str, Any]) -> str:
    """The tool's name in one entry of a request's `tools`."""
    return str(entry["function"]["name"] if "function" in entry else entry["name"])


@pytest.mark.parametrize("style", ["openai", "anthropic"])
@pytest.mark.parametrize(("variant", "window"), [("full", 200_000), ("compact", 8192)])
async def test_the_tool_list_sent_to_the_model_is_unchanged(
    tmp_path: Path, style: str, variant: str, window: int
) -> None:
    """Each pinned tool is sent exactly as before, in the same order, but for `REORDERED`. A
    tool added since is not pinned here (adding one touches its module, the registry and its
    test alone)."""
    request = await first_request(tmp_path, WindowedModel(window))
    actual = sent(style, request)
    sent_entries = json.loads(actual)
    assert msgspec.json.encode(sent_entries) == actual  # so comparing the parsed form is exact
    expected_file = EXPECTED / f"{style}_{variant}.json"
    expected = [as_generated(entry, variant) for entry in json.loads(expected_file.read_text())]
    pinned = {name_of(entry) for entry in expected}
    kept = [entry for entry in sent_entries if name_of(entry) in pinned]
    assert kept == expected  # readable in a diff: the file is indented
    assert msgspec.json.encode(kept) == msgspec.json.encode(expected), "key order differs"
