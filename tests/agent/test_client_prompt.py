"""The client's own system prompt (acp_server/agent/client_prompt.py): capped by UTF-8 bytes with
a note saying what was cut, and placed on the system-prompt seam: `append` after our
instructions, `override` in their place. Through the real process, with the project's
instruction files after it: tests/e2e/test_client_system_prompt.py."""

from __future__ import annotations

import pytest

from acp_server.agent.client_prompt import ClientPrompt, cap_client_prompt
from acp_server.cancellation import TurnCancellation

pytestmark = pytest.mark.anyio


def test_a_prompt_within_the_budget_is_kept_whole() -> None:
    assert cap_client_prompt("be brief", max_bytes=8) == "be brief"


def test_a_longer_prompt_is_cut_on_a_character_boundary_and_says_so() -> None:
    capped = cap_client_prompt("ab€cd", max_bytes=4)  # "€" is 3 bytes: a cut at 4 splits it
    kept, note = capped.split("\n", 1)
    assert kept == "ab"
    assert note == (
        "(cut: the client's system prompt has 7 bytes and only the first 2 fit the 4-byte"
        " budget for it)"
    )


async def test_no_client_prompt_leaves_the_parts_alone() -> None:
    parts = ["our instructions", "environment"]
    await ClientPrompt().assemble(parts, TurnCancellation().signal)
    assert parts == ["our instructions", "environment"]


async def test_append_adds_the_text_after_what_is_there() -> None:
    prompt = ClientPrompt()
    prompt.set("append", "the client's words")
    parts = ["our instructions"]
    await prompt.assemble(parts, TurnCancellation().signal)
    assert parts == ["our instructions", "the client's words"]


async def test_override_replaces_our_instructions_only() -> None:
    prompt = ClientPrompt()
    prompt.set("override", "the client's words")
    parts = ["our instructions", "environment"]
    await prompt.assemble(parts, TurnCancellation().signal)
    assert parts == ["the client's words", "environment"]
