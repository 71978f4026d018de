"""Images in tool results, as each provider sends them, against the local fake HTTP server:
Anthropic puts `image` blocks inside the `tool_result`; OpenAI's tool messages take text only,
so the images follow the step's tool results in a user message; a model that does not take
images gets the text and a note; an OpenAI-compatible server is asked `/props` once
(`modalities.vision`); the context budget counts each image a fixed amount."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from acp_server.agent.conversation import Conversation, trimmed
from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.models.anthropic import AnthropicProvider
from acp_server.models.base import (
    AssistantMessage,
    ImagePart,
    TextPart,
    ToolCallRequest,
    ToolResultMessage,
    UserMessage,
)
from acp_server.models.budget import IMAGE_TOKENS, estimate_items
from acp_server.models.images import IMAGE_NOT_SENT, vision_from_props
from acp_server.models.openai import OpenAIProvider
from acp_server.session import records as rec
from tests.support.providers import FAST, close_all, collect, request, track
from tests.support.sse_server import Reply, json_reply, recorded, serve

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """asyncio only, as where these tests came from (tests/models, tests/tools): the tool and
    provider code under test does not claim trio support; tests/agent's conftest adds trio."""
    return "asyncio"


PNG = ImagePart(data="iVBORw0KGgo=", mime_type="image/png")
URL = f"data:image/png;base64,{PNG.data}"


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    yield
    await close_all()


def conversation() -> list[Any]:
    """A step with two calls (the first returned an image), then a text answer and a prompt."""
    calls = [
        ToolCallRequest(call_id="c1", name="read_file", arguments={"path": "a.png"}),
        ToolCallRequest(call_id="c2", name="read_file", arguments={"path": "b.txt"}),
    ]
    return [
        UserMessage(parts=[]),
        AssistantMessage(text="", tool_calls=calls),
        ToolResultMessage(
            call_id="c1", output="[image a.png: PNG, 1x1 pixels, 8 bytes]", images=[PNG]
        ),
        ToolResultMessage(call_id="c2", output="text of b"),
        AssistantMessage(text="Seen."),
    ]


def openai(url: str, images: bool | None) -> OpenAIProvider:
    options = dataclasses.replace(FAST, images=images)
    return track(OpenAIProvider("m", base_url=url + "/v1", options=options))


def anthropic(url: str, images: bool | None) -> AnthropicProvider:
    options = dataclasses.replace(FAST, images=images)
    return track(AnthropicProvider("claude-x", base_url=url, api_key="k", options=options))


async def test_openai_sends_a_tool_image_in_a_user_message_after_the_steps_results() -> None:
    async with serve(recorded("openai_text")) as server:
        await collect(openai(server.url, True), request(messages=conversation()))
    [chat] = server.requests  # configured: no probe
    messages = chat.json()["messages"]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    assert messages[2]["content"] == "[image a.png: PNG, 1x1 pixels, 8 bytes]"
    assert messages[4]["content"] == [
        {"type": "text", "text": "[image(s) returned by tool call c1]"},
        {"type": "image_url", "image_url": {"url": URL}},
    ]


async def test_openai_puts_trailing_tool_images_at_the_start_of_the_next_prompt() -> None:
    items = [*conversation()[:4], UserMessage(parts=[TextPart(text="go on")])]
    async with serve(recorded("openai_text")) as server:
        await collect(openai(server.url, True), request(messages=items))
    last = server.requests[0].json()["messages"][-1]
    assert last["role"] == "user"
    assert last["content"][1] == {"type": "image_url", "image_url": {"url": URL}}
    assert last["content"][-1] == {"type": "text", "text": "go on"}


async def test_a_model_without_images_gets_the_description_and_a_note() -> None:
    async with serve(recorded("openai_text"), recorded("anthropic_text")) as server:
        await collect(openai(server.url, False), request(messages=conversation()))
        await collect(anthropic(server.url, False), request(messages=conversation()))
    chat, message = (seen.json() for seen in server.requests)
    assert "image_url" not in str(chat) and PNG.data not in str(chat)
    assert chat["messages"][2]["content"].endswith("bytes]\n" + IMAGE_NOT_SENT)
    assert PNG.data not in str(message)
    result = message["messages"][1]["content"][0]
    assert result["content"].endswith("bytes]\n" + IMAGE_NOT_SENT)


async def test_anthropic_puts_the_image_block_inside_the_tool_result() -> None:
    async with serve(recorded("anthropic_text")) as server:
        await collect(anthropic(server.url, None), request(messages=conversation()))
    messages = server.requests[0].json()["messages"]
    first = messages[1]["content"][0]
    assert first["type"] == "tool_result" and first["tool_use_id"] == "c1"
    assert first["content"] == [
        {"type": "text", "text": "[image a.png: PNG, 1x1 pixels, 8 bytes]"},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": PNG.data},
        },
    ]
    assert messages[1]["content"][1]["content"] == "text of b"  # text-only results stay strings


async def test_an_openai_compatible_server_is_asked_props_once_and_believed() -> None:
    props = json_reply(200, {"modalities": {"vision": True, "audio": False}})
    async with serve(props, recorded("openai_text"), recorded("openai_text")) as server:
        model = openai(server.url, None)
        await collect(model, request(messages=conversation()))
        await collect(model, request(messages=conversation()))
    assert [(s.method, s.path) for s in server.requests] == [
        ("GET", "/props"),
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/chat/completions"),
    ]
    assert URL in str(server.requests[2].json())


@pytest.mark.parametrize(
    "reply",
    [
        json_reply(200, {"modalities": {"vision": False}}),
        json_reply(200, {"default_generation_settings": {"n_ctx": 4096}}),  # older llama.cpp
        json_reply(404, {"error": {"message": "not found"}}),  # not llama.cpp
        json_reply(200, {"modalities": {"vision": "yes"}}),  # not a boolean
    ],
)
async def test_a_server_that_does_not_say_vision_gets_no_images(reply: Reply) -> None:
    async with serve(reply, recorded("openai_text")) as server:
        await collect(openai(server.url, None), request(messages=conversation()))
    chat = server.requests[1].json()
    assert PNG.data not in str(chat) and IMAGE_NOT_SENT in str(chat)


async def test_requests_without_tool_images_never_probe() -> None:
    async with serve(recorded("openai_text")) as server:
        await collect(openai(server.url, None), request())
    assert [s.path for s in server.requests] == ["/v1/chat/completions"]


async def test_a_cancel_during_the_probe_aborts_and_the_next_request_asks_again() -> None:
    held = Reply(hold=True, headers={"content-type": "application/json"}, chunks=[b"{"])
    props = json_reply(200, {"modalities": {"vision": True}})
    async with serve(held, props, recorded("openai_text")) as server:
        model = openai(server.url, None)
        cancellation = TurnCancellation()

        async def cancel_when_asked() -> None:
            # The fake server has no event for "a request arrived": look until it has one.
            while not server.requests:  # noqa: ASYNC110
                await anyio.sleep(0.01)
            cancellation.abort(UserCancel())

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_when_asked)
            with pytest.raises(TurnAborted):
                await collect(model, request(messages=conversation()), cancellation.signal)
        await collect(model, request(messages=conversation()))
    assert [s.path for s in server.requests] == ["/props", "/props", "/v1/chat/completions"]
    assert URL in str(server.requests[2].json())


async def test_vision_from_props_reads_only_a_boolean() -> None:
    assert vision_from_props({"modalities": {"vision": True}}) is True
    assert vision_from_props({"modalities": {"vision": False}}) is False
    assert vision_from_props({"modalities": []}) is None
    assert vision_from_props([]) is None


async def test_the_budget_counts_each_tool_image_a_fixed_amount() -> None:
    plain = ToolResultMessage(call_id="c1", output="x" * 30)
    with_images = ToolResultMessage(call_id="c1", output="x" * 30, images=[PNG, PNG])
    assert estimate_items([with_images]) - estimate_items([plain]) == 2 * IMAGE_TOKENS


async def test_tool_images_come_back_from_the_log_and_go_with_a_trimmed_body() -> None:
    record = rec.ToolResult(
        turn_id="t1",
        call_id="c1",
        status="completed",
        output="[image a.png]",
        images=[rec.ImagePart(data=PNG.data, mime_type=PNG.mime_type)],
        at=rec.utc_now(),
    )
    decoded = rec.decode_record(rec.encode_record(record))
    [item] = Conversation([decoded]).items
    assert isinstance(item, ToolResultMessage) and item.images == [PNG]
    stub = trimmed(item)
    assert isinstance(stub, ToolResultMessage) and stub.images == []


async def test_the_public_openai_api_and_anthropic_take_images_without_asking() -> None:
    signal = TurnCancellation().signal
    public = track(OpenAIProvider("gpt-4o", api_key="sk-test"))  # never contacted
    assert await public.takes_images(signal)
    assert await anthropic("http://127.0.0.1:9", None).takes_images(signal)
