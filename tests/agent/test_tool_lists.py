"""The tool list a model is sent, pinned byte for byte: every tool a session can offer
(the built-ins, `ask_user`, `skill`, `task`), as the OpenAI-style and the Anthropic-style
request carry it, in the full variant and in the compact one (a window of 8k tokens or less).

The expected lists in tests/data/tool_lists/ were written by the code before the tool schemas
were generated from the argument Structs (issue 36); a change to what the model sees shows here
first. Regenerate them only for a purposeful change, and name it in the RFC
docs/rfc/implemented/architecture/2026-12-06-toolbox-and-one-entry-point.md.
"""

from __future__ import annotations

import json
from pathlib import Path

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


@pytest.mark.parametrize("style", ["openai", "anthropic"])
@pytest.mark.parametrize(("variant", "window"), [("full", 200_000), ("compact", 8192)])
async def test_the_tool_list_sent_to_the_model_is_unchanged(
    tmp_path: Path, style: str, variant: str, window: int
) -> None:
    request = await first_request(tmp_path, WindowedModel(window))
    actual = sent(style, request)
    expected_file = EXPECTED / f"{style}_{variant}.json"
    expected = json.loads(expected_file.read_text())
    # Readable in a diff (the file is indented), and compared as the exact bytes sent.
    assert json.loads(actual) == expected
    assert actual == msgspec.json.encode(expected), "same content, different bytes (key order?)"
