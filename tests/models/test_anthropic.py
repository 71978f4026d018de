"""`anthropic:MODEL` against a local fake server replaying recorded Messages API streams:
text, thinking, tool_use with partial JSON, stop reasons, usage, mid-stream errors, the
request shape, the API key, and the shared HTTP behaviour seen from this provider."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from acp_server.models.anthropic import AnthropicProvider
from acp_server.models.base import (
    AssistantMessage,
    ImagePart,
    ModelError,
    TextPart,
    ToolCallDraft,
    ToolCallEvent,
    ToolCallRequest,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from acp_server.models.spec import load_model
from tests.support.providers import (
    AN_HOUR,
    FAST,
    HANG_GUARD_S,
    calls,
    close_all,
    collect,
    finish,
    request,
    stream_until_aborted,
    texts,
    thoughts,
    track,
)
from tests.support.sse_server import (
    anthropic_events,
    json_reply,
    recorded,
    serve,
    sse_reply,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    yield
    await close_all()


def provider(url: str, *, api_key: str | None = "sk-ant-test", **kwargs: Any) -> AnthropicProvider:
    options = kwargs.pop("options", FAST)
    return track(
        AnthropicProvider("claude-x", base_url=url, api_key=api_key, options=options, **kwargs)
    )


def message(*blocks: list[dict[str, Any]], stop_reason: str = "end_turn") -> list[dict[str, Any]]:
    """A whole event sequence: start, the given blocks' events, delta and stop."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}}
    ]
    for block in blocks:
        events.extend(block)
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        }
    )
    events.append({"type": "message_stop"})
    return events


def text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        *(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": p},
            }
            for p in pieces
        ),
        {"type": "content_block_stop", "index": index},
    ]


# --- streams --------------------------------------------------------------------------------


async def test_text_stream_with_usage_and_headers() -> None:
    async with serve(recorded("anthropic_text")) as server:
        events = await collect(provider(server.url))
    assert texts(events) == "Hello!"
    assert events[-2] == Usage(input_tokens=25, output_tokens=15)
    assert finish(events) == "stop"
    seen = server.requests[0]
    assert (seen.method, seen.path) == ("POST", "/v1/messages")
    assert seen.headers["x-api-key"] == "sk-ant-test"
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers


async def test_thinking_text_and_tool_use_with_partial_json() -> None:
    async with serve(recorded("anthropic_tool_use")) as server:
        events = await collect(provider(server.url))
    assert thoughts(events) == "I need the weather in San Francisco."
    assert texts(events) == "Let me check."
    assert calls(events) == [
        (
            "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "get_weather",
            {"location": "San Francisco, CA", "unit": "fahrenheit"},
        ),
        ("toolu_02", "get_time", {}),
    ]
    # input counts cached tokens too: the context holds them all
    assert events[-2] == Usage(
        input_tokens=472 + 10 + 100, output_tokens=89, cache_read_tokens=100, cache_write_tokens=10
    )
    assert finish(events) == "tool_calls"


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("pause_turn", "stop"),
        ("model_context_window_exceeded", "stop"),
    ],
)
async def test_stop_reasons(stop_reason: str, expected: str) -> None:
    reply = anthropic_events(message(text_block(0, "hi"), stop_reason=stop_reason))
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    assert texts(events) == "hi"
    assert finish(events) == expected
    assert events[-2] == Usage(input_tokens=3, output_tokens=5)


async def test_error_event_mid_stream() -> None:
    events = message(text_block(0, "partial"))[:3]
    events.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    async with serve(anthropic_events(events)) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url))
    assert info.value.message == (
        "anthropic:claude-x: the server reported an error mid-stream (overloaded_error): Overloaded"
    )
    assert info.value.code == "overloaded_error"
    assert len(server.requests) == 1


async def test_invalid_tool_json_names_the_tool() -> None:
    block = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "bash", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"cmd": '},
        },
        {"type": "content_block_stop", "index": 0},
    ]
    async with serve(anthropic_events(message(block, stop_reason="tool_use"))) as server:
        events = await collect(provider(server.url))
    [call] = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert (call.call_id, call.name, call.arguments) == ("t1", "bash", {})
    assert call.arguments_error is not None
    assert call.arguments_error.startswith("the arguments are not valid JSON")
    assert finish(events) == "tool_calls"


async def test_a_second_tool_use_under_an_earlier_ones_id_gets_an_id_of_its_own() -> None:
    """A server repeating `toolu_1` for two calls of one response: they are drafted and
    completed apart, and their results can be told apart in the next request (as on OpenAI)."""
    blocks = []
    for index, name in enumerate(["read_file", "list_dir"]):
        use = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
        blocks += [
            {"type": "content_block_start", "index": index, "content_block": use},
            {"type": "content_block_stop", "index": index},
        ]
    async with serve(anthropic_events(message(blocks, stop_reason="tool_use"))) as server:
        events = await collect(provider(server.url))
    [(first, _, _), (second, _, _)] = calls(events)
    assert first == "toolu_1" != second
    assert second.startswith("toolu_")
    drafts = [e.call_id for e in events if isinstance(e, ToolCallDraft)]
    assert drafts == [first, second]


async def test_malformed_event_names_the_provider() -> None:
    reply = sse_reply('event: content_block_delta\ndata: {"index": 0, "delta": \n\n')
    async with serve(reply) as server:
        with pytest.raises(ModelError, match=r"^anthropic:claude-x: malformed stream chunk"):
            await collect(provider(server.url))


async def test_events_without_event_lines_use_the_data_type() -> None:
    pieces = "".join(f"data: {json.dumps(e)}\n\n" for e in message(text_block(0, "a", "b")))
    async with serve(sse_reply(pieces)) as server:
        events = await collect(provider(server.url))
    assert texts(events) == "ab"
    assert finish(events) == "stop"


async def test_stream_cut_midway() -> None:
    reply = anthropic_events(message(text_block(0, "partial"))[:3])
    reply.framing = "close"
    reply.cut = True
    async with serve(reply) as server:
        with pytest.raises(ModelError, match="the stream ended before the response was complete"):
            await collect(provider(server.url))


async def test_missing_message_stop_after_a_stop_reason_is_accepted() -> None:
    reply = anthropic_events(message(text_block(0, "done"))[:-1])
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    assert finish(events) == "stop"


# --- request shape ----------------------------------------------------------------------------


async def test_request_body_shape() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    req = request(
        system_prompt="Be brief.",
        messages=[
            UserMessage(
                parts=[
                    TextPart(text="what is this?"),
                    ImagePart(data="iVBOR", mime_type="image/png"),
                ]
            ),
            AssistantMessage(
                text="Reading both.",
                tool_calls=[
                    ToolCallRequest(call_id="toolu_1", name="read", arguments={"path": "a"}),
                    ToolCallRequest(call_id="toolu_2", name="read", arguments={"path": "b"}),
                ],
            ),
            ToolResultMessage(call_id="toolu_1", output="A"),
            ToolResultMessage(call_id="toolu_2", output="missing", is_error=True),
            AssistantMessage(text="", tool_calls=[]),  # empty: left out
            UserMessage(parts=[TextPart(text=""), TextPart(text="thanks")]),
        ],
        tools=[ToolSpec(name="read", description="Read a file", parameters=schema)],
    )
    async with serve(recorded("anthropic_text")) as server:
        await collect(provider(server.url), req)
    body = server.requests[0].json()
    assert body["model"] == "claude-x"
    assert body["max_tokens"] == 8192
    assert body["stream"] is True
    cached = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": cached}]
    assert body["tools"] == [
        {
            "name": "read",
            "description": "Read a file",
            "input_schema": schema,
            "cache_control": cached,
        }
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading both."},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "missing",
                    "is_error": True,
                },
                {"type": "text", "text": "thanks", "cache_control": cached},
            ],
        },
    ]


async def test_max_tokens_and_no_system() -> None:
    async with serve(recorded("anthropic_text")) as server:
        await collect(provider(server.url), request(max_output_tokens=256))
    body = server.requests[0].json()
    assert body["max_tokens"] == 256
    assert "system" not in body
    assert "tools" not in body


# --- keys, errors, retries, cancellation ------------------------------------------------------


async def test_missing_api_key_is_a_clear_error() -> None:
    async with serve(recorded("anthropic_text")) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url, api_key=None))
    assert info.value.message == (
        "anthropic:claude-x: no API key. Set ANTHROPIC_API_KEY to an Anthropic API key."
    )
    assert server.requests == []


async def test_load_model_without_the_key_fails_on_first_request() -> None:
    p = track(load_model("anthropic:claude-x", environ={}))
    assert p.name == "anthropic:claude-x"
    with pytest.raises(ModelError, match="Set ANTHROPIC_API_KEY"):
        await collect(p)


async def test_load_model_reads_key_and_base_url_from_the_environment() -> None:
    async with serve(recorded("anthropic_text")) as server:
        env = {"ANTHROPIC_API_KEY": "sk-env", "ANTHROPIC_BASE_URL": server.url + "/"}
        events = await collect(track(load_model("anthropic:claude-y", environ=env)))
    assert finish(events) == "stop"
    assert server.requests[0].headers["x-api-key"] == "sk-env"
    assert server.requests[0].json()["model"] == "claude-y"


async def test_401_names_provider_model_and_fix() -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    async with serve(json_reply(401, body)) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url))
    message = info.value.message
    assert message.startswith("anthropic:claude-x: the API key was rejected (HTTP 401).")
    assert "authentication_error: invalid x-api-key" in message
    assert message.endswith("Set ANTHROPIC_API_KEY to a valid key.")


async def test_404_says_check_model_and_base_url() -> None:
    body = {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}}
    async with serve(json_reply(404, body)) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url))
    assert "model or endpoint not found (HTTP 404)" in info.value.message
    assert "Check the model name and ANTHROPIC_BASE_URL" in info.value.message


async def test_a_redirect_is_not_followed_so_the_key_goes_nowhere_else() -> None:
    """httpx would keep `x-api-key` on a redirect to another host (it drops only
    `Authorization`); the provider's client follows no redirect, and says what it got."""
    async with serve(json_reply(200, {})) as other:
        moved = json_reply(302, {}, {"location": f"{other.url}/v1/messages"})
        async with serve(moved) as server:
            with pytest.raises(ModelError) as info:
                await collect(provider(server.url))
    assert other.requests == []
    assert "HTTP 302" in info.value.message


async def test_529_overloaded_with_retry_after_then_success() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    async with serve(json_reply(529, body, {"retry-after": "1"}), recorded("anthropic_text")) as (
        server
    ):
        events = await collect(provider(server.url))
    assert texts(events) == "Hello!"
    assert len(server.requests) == 2
    waited = server.requests[1].at - server.requests[0].at
    assert waited >= 0.9, waited  # the 1 s the server asked for


async def test_slow_stream_cancelled_mid_chunk_closes_the_connection() -> None:
    reply = anthropic_events(message(text_block(0, "first", "never")))
    reply.delay = AN_HOUR  # the first event arrives at once; the rest never do
    async with serve(reply) as server:
        events = await stream_until_aborted(provider(server.url), lambda _: bool(server.requests))
        with anyio.fail_after(HANG_GUARD_S):
            await server.requests[0].closed.wait()  # the server saw the connection close
    assert events == []  # message_start yields nothing


async def test_the_status_note_comes_after_the_cache_breakpoint() -> None:
    # The background commands' note changes from request to request: after the breakpoint,
    # the cached prefix of the next request is the same as without it.
    from acp_server.models.anthropic import request_body

    body = request_body(
        "claude-x",
        request(
            messages=[
                AssistantMessage(
                    text="", tool_calls=[ToolCallRequest(call_id="t1", name="read", arguments={})]
                ),
                ToolResultMessage(call_id="t1", output="A"),
            ],
            status="bg_1 running",
        ),
    )
    last = body["messages"][-1]
    assert last["role"] == "user"
    assert last["content"][-2]["type"] == "tool_result"
    assert last["content"][-2]["cache_control"] == {"type": "ephemeral"}
    assert last["content"][-1] == {"type": "text", "text": "bg_1 running"}
