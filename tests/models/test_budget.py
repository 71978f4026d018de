"""The context budget's estimate: the provider's last count plus a byte-based guess for what
was added since, or a guess of the whole request when the history is not an extension."""

from __future__ import annotations

import pytest

from acp_server.cancellation import TurnCancellation
from acp_server.models.base import (
    AssistantMessage,
    ConversationItem,
    ImagePart,
    ModelRequest,
    TextPart,
    ToolCallRequest,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from acp_server.models.budget import (
    BYTES_PER_TOKEN,
    IMAGE_TOKENS,
    ITEM_OVERHEAD,
    ContextBudget,
    estimate_items,
    estimate_request,
)
from acp_server.models.script import echo_provider

pytestmark = pytest.mark.anyio

TOOLS = [ToolSpec(name="read_file", description="Read a file", parameters={"type": "object"})]


def user(text: str) -> UserMessage:
    return UserMessage(parts=[TextPart(text=text)])


def req(messages: list[ConversationItem], system: str = "Be brief.") -> ModelRequest:
    return ModelRequest(session_id="s", system_prompt=system, messages=messages, tools=TOOLS)


async def resolved(threshold: float = 0.8) -> ContextBudget:
    budget = ContextBudget(threshold)
    await budget.resolve(echo_provider(), TurnCancellation().signal)
    return budget


def test_text_is_counted_at_three_bytes_a_token_rounded_up() -> None:
    assert estimate_items([user("x" * 300)]) == ITEM_OVERHEAD + 300 // BYTES_PER_TOKEN
    assert estimate_items([user("x" * 301)]) == ITEM_OVERHEAD + 101
    assert estimate_items([user("é" * 3)]) == ITEM_OVERHEAD + 2  # 6 bytes of UTF-8


def test_images_count_a_fixed_amount_whatever_their_base64_size() -> None:
    image = UserMessage(parts=[ImagePart(data="A" * 3_000_000, mime_type="image/png")])
    assert estimate_items([image]) == ITEM_OVERHEAD + IMAGE_TOKENS


def test_tool_calls_and_results_are_counted() -> None:
    call = AssistantMessage(
        text="", tool_calls=[ToolCallRequest(call_id="c", name="read_file", arguments={"p": 1})]
    )
    result = ToolResultMessage(call_id="c", output="y" * 3000)
    assert estimate_items([call]) > ITEM_OVERHEAD
    assert estimate_items([result]) == ITEM_OVERHEAD + 1000


async def test_without_a_report_the_whole_request_is_guessed() -> None:
    budget = await resolved()
    request = req([user("hello " * 100)])
    assert budget.estimate(request) == estimate_request(request)
    assert budget.window == 100_000 and budget.limit == 80_000


async def test_after_a_report_only_what_was_added_is_guessed() -> None:
    budget = await resolved()
    first = req([user("hello")])
    budget.record_usage(first, Usage(input_tokens=5_000, output_tokens=10))
    answer = AssistantMessage(text="a" * 300)
    second = req([*first.messages, answer, user("b" * 30)])
    added = estimate_items([answer, user("b" * 30)])
    assert budget.estimate(second) == 5_000 + added
    assert budget.estimate(first) == 5_000


async def test_a_changed_system_prompt_moves_the_estimate_by_the_difference() -> None:
    budget = await resolved()
    first = req([user("hello")], system="s" * 30)
    budget.record_usage(first, Usage(input_tokens=5_000, output_tokens=10))
    assert budget.estimate(req(first.messages, system="s" * 60)) == 5_010


async def test_a_rewritten_history_is_guessed_whole() -> None:
    budget = await resolved()
    first = req([user("hello"), AssistantMessage(text="long " * 1000), user("more")])
    budget.record_usage(first, Usage(input_tokens=50_000, output_tokens=10))
    compacted = req([user("summary of what happened"), user("more")])
    assert budget.estimate(compacted) == estimate_request(compacted)
    budget.forget_usage()
    assert budget.estimate(first) == estimate_request(first)


async def test_another_model_is_guessed_whole() -> None:
    budget = await resolved()
    first = req([user("hello")])
    budget.record_usage(first, Usage(input_tokens=5_000, output_tokens=10))

    class Other:
        name = "other"

    await budget.resolve(Other(), TurnCancellation().signal)
    assert budget.estimate(first) == estimate_request(first)


async def test_a_zero_report_is_ignored() -> None:
    budget = await resolved()
    first = req([user("hello")])
    budget.record_usage(first, Usage(input_tokens=0, output_tokens=0))
    assert budget.estimate(first) == estimate_request(first)


async def test_threshold() -> None:
    budget = await resolved(threshold=0.5)
    small = req([user("x")])
    big = req([user("x" * 3 * 60_000)])
    assert not budget.over_threshold(small)
    assert budget.over_threshold(big)
    with pytest.raises(ValueError, match="threshold"):
        ContextBudget(1.5)
