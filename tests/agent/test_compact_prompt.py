"""A model with a window of 8k tokens or less gets the compact system prompt and the short
list of short tool descriptions; a larger window gets the full ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server.agent.compact_prompt import (
    COMPACT_DESCRIPTIONS,
    COMPACT_SYSTEM_PROMPT,
    COMPACT_TOOLS,
)
from acp_server.agent.instructions import DEFAULT_SYSTEM_PROMPT
from acp_server.models.budget import estimate_request
from tests.support.agent_harness import WindowedModel, running_agent, text
from tests.support.tool_workspace import Workspace

pytestmark = pytest.mark.anyio


async def first_request(tmp_path: Path, window: int) -> object:
    tmp_path.mkdir()  # noqa: ASYNC240 - test setup, before anything runs
    ws = Workspace(tmp_path)
    model = WindowedModel(window)
    async with running_agent(model, tools=list(ws.tools.values())) as handle:  # type: ignore[arg-type]
        await handle.agent.followup(text("fix it")).wait()
    return model.requests[0]


async def test_an_8k_window_gets_the_compact_variant(tmp_path: Path) -> None:
    small = await first_request(tmp_path / "a", 8192)
    large = await first_request(tmp_path / "b", 32768)
    assert small.system_prompt.startswith(COMPACT_SYSTEM_PROMPT)  # type: ignore[attr-defined]
    assert large.system_prompt.startswith(DEFAULT_SYSTEM_PROMPT)  # type: ignore[attr-defined]
    small_tools = {t.name: t for t in small.tools}  # type: ignore[attr-defined]
    large_tools = {t.name: t for t in large.tools}  # type: ignore[attr-defined]
    assert set(small_tools) == COMPACT_TOOLS < set(large_tools)
    read = small_tools["read_file"]
    assert "." not in read.description.rstrip(".")  # one sentence
    # read_file and edit_file are described for the compact list; the others by their first
    # sentence.
    for name, spec in small_tools.items():
        full = large_tools[name].description
        assert spec.description == COMPACT_DESCRIPTIONS.get(name, full.split(". ")[0] + ".")
    assert "copied exactly from what read_file returned" in small_tools["edit_file"].description
    assert all("description" not in p for p in read.parameters["properties"].values())
    assert read.parameters["required"] == large_tools["read_file"].parameters["required"]
    # Measured with the budget's estimate: the compact variant is much smaller.
    assert estimate_request(small) * 2 < estimate_request(large)  # type: ignore[arg-type]
