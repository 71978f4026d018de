"""Providers at their limits, against local HTTP servers speaking each streaming format: a
context-exceeded answer is a typed error with the sizes the server gave, a response cut by
the output limit in a tool call ends `max_tokens`, usage counts cache reads, and a server
that rejects `stream_options` is asked again without it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from acp_server.models.anthropic import AnthropicProvider
from acp_server.models.base import (
    ContextWindowExceeded,
    ModelError,
    ToolCallEvent,
    Usage,
)
from acp_server.models.openai import OpenAIProvider
from acp_server.models.overflow import context_overflow
from tests.support.providers import FAST, close_all, collect, finish, texts, track
from tests.support.sse_server import Reply, anthropic_events, json_reply, openai_chunks, serve

pytestmark = pytest.mark.anyio

LLAMA_CPP_400 = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5213,
        "n_ctx": 4096,
    }
}
OPENAI_400 = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your "
        "messages resulted in 130512 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
VLLM_400 = {
    "object": "error",
    "message": "This model's maximum context length is 8192 tokens. However, you requested "
    "9000 tokens (8000 in the messages, 1000 in the completion). Please reduce the length.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
ANTHROPIC_400 = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum",
    },
}


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    yield
    await close_all()


def openai(url: str) -> OpenAIProvider:
    return track(OpenAIProvider("qwen", base_url=url + "/v1", options=FAST))


def anthropic(url: str) -> AnthropicProvider:
    return track(AnthropicProvider("claude-x", base_url=url, api_key="k", options=FAST))


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]}


# --- context exceeded -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "request_tokens", "window"),
    [
        (LLAMA_CPP_400, 5213, 4096),
        (OPENAI_400, 130512, 128000),
        (VLLM_400, 9000, 8192),
        (ANTHROPIC_400, 210000, 200000),
        ({"error": "context window exceeded"}, None, None),
    ],
)
async def test_every_known_shape_is_recognised_with_its_sizes(
    body: Any, request_tokens: int | None, window: int | None
) -> None:
    error = context_overflow("p:m", 400, json.dumps(body).encode())
    assert isinstance(error, ContextWindowExceeded)
    assert (error.request_tokens, error.window) == (request_tokens, window)
    assert error.code == "context_window_exceeded"
    assert error.message.startswith("p:m: the conversation no longer fits the model")


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": {"message": "model 'x' does not support tools"}}),
        (429, {"error": {"message": "too many tokens per minute"}}),
        (500, LLAMA_CPP_400),
    ],
)
async def test_other_errors_are_not_overflows(status: int, body: Any) -> None:
    assert context_overflow("p:m", status, json.dumps(body).encode()) is None


async def test_the_message_names_window_and_size_and_is_completed_by_the_estimate() -> None:
    error = context_overflow("openai:qwen", 400, json.dumps(LLAMA_CPP_400).encode())
    assert error is not None
    assert "a request of 5213 tokens does not fit in the 4096-token context window" in str(error)
    bare = context_overflow("openai:qwen", 400, b'{"error": "prompt is too long"}')
    assert bare is not None and bare.request_tokens is None
    completed = bare.completed(estimate=7000, window=4096)
    assert "a request of about 7000 tokens does not fit in the 4096-token context window" in str(
        completed
    )
    assert completed.server_said == "prompt is too long"


async def test_llamacpp_400_through_the_openai_provider() -> None:
    async with serve(json_reply(400, LLAMA_CPP_400)) as server:
        with pytest.raises(ContextWindowExceeded) as caught:
            await collect(openai(server.url))
    assert (caught.value.request_tokens, caught.value.window) == (5213, 4096)
    assert len(server.requests) == 1  # not retried


async def test_vllm_and_openai_400_through_the_openai_provider() -> None:
    for body, window in ((VLLM_400, 8192), (OPENAI_400, 128000)):
        async with serve(json_reply(400, body)) as server:
            with pytest.raises(ContextWindowExceeded) as caught:
                await collect(openai(server.url))
        assert caught.value.window == window


async def test_a_mid_stream_error_chunk_about_the_context() -> None:
    reply = openai_chunks([{"error": OPENAI_400["error"]}], done=False)
    async with serve(reply) as server:
        with pytest.raises(ContextWindowExceeded):
            await collect(openai(server.url))


async def test_anthropic_prompt_too_long_as_answer_and_as_event() -> None:
    async with serve(json_reply(400, ANTHROPIC_400)) as server:
        with pytest.raises(ContextWindowExceeded) as caught:
            await collect(anthropic(server.url))
    assert caught.value.window == 200000
    async with serve(anthropic_events([ANTHROPIC_400])) as server:
        with pytest.raises(ContextWindowExceeded):
            await collect(anthropic(server.url))


async def test_other_400s_stay_plain_model_errors() -> None:
    body = {"error": {"message": "tools are not supported"}}
    async with serve(json_reply(400, body)) as server:
        with pytest.raises(ModelError) as caught:
            await collect(openai(server.url))
    assert not isinstance(caught.value, ContextWindowExceeded)


# --- the output limit -----------------------------------------------------------------------


async def test_a_tool_call_cut_by_the_output_limit_ends_max_tokens_without_the_call() -> None:
    """What llama.cpp capped at 18 output tokens sends: half the arguments, then `length`."""
    reply = openai_chunks(
        [
            chunk({"content": "Reading."}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "src/ma'},
                        }
                    ]
                }
            ),
            chunk(finish_reason="length"),
        ]
    )
    async with serve(reply) as server:
        events = await collect(openai(server.url))
    assert texts(events) == "Reading."
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    assert finish(events) == "max_tokens"


async def test_a_finished_call_before_the_cut_is_kept() -> None:
    calls = [
        {"index": 0, "id": "c1", "function": {"name": "a", "arguments": "{}"}},
        {"index": 1, "id": "c2", "function": {"name": "b", "arguments": '{"x": '}},
    ]
    reply = openai_chunks([chunk({"tool_calls": calls}), chunk(finish_reason="length")])
    async with serve(reply) as server:
        events = await collect(openai(server.url))
    assert [e.call.name for e in events if isinstance(e, ToolCallEvent)] == ["a"]
    assert finish(events) == "max_tokens"


async def test_anthropic_tool_use_cut_by_max_tokens() -> None:
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "bash", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"command": "ls -'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {}},
        {"type": "message_stop"},
    ]
    async with serve(anthropic_events(events)) as server:
        streamed = await collect(anthropic(server.url))
    assert not [e for e in streamed if isinstance(e, ToolCallEvent)]
    assert finish(streamed) == "max_tokens"


# --- usage and stream_options ---------------------------------------------------------------


async def test_openai_usage_counts_cached_prompt_tokens() -> None:
    usage = {
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "prompt_tokens_details": {"cached_tokens": 1920},
    }
    reply = openai_chunks([chunk({"content": "hi"}, "stop"), {"choices": [], "usage": usage}])
    async with serve(reply) as server:
        events = await collect(openai(server.url))
    assert events[-2] == Usage(input_tokens=2006, output_tokens=300, cache_read_tokens=1920)
    assert server.requests[0].json()["stream_options"] == {"include_usage": True}


async def test_a_server_rejecting_stream_options_is_asked_again_without_it() -> None:
    rejected = json_reply(
        400, {"error": {"message": "Unrecognized request argument supplied: stream_options"}}
    )
    answer = openai_chunks([chunk({"content": "hi"}, "stop")])
    async with serve(rejected, answer, openai_chunks([chunk({"content": "again"}, "stop")])) as (
        server
    ):
        provider = openai(server.url)
        first = await collect(provider)
        second = await collect(provider)
    assert (texts(first), texts(second)) == ("hi", "again")
    bodies = [seen.json() for seen in server.requests]
    assert "stream_options" in bodies[0]
    assert "stream_options" not in bodies[1] and "stream_options" not in bodies[2]


async def test_other_400s_are_not_retried_without_stream_options() -> None:
    body = {"error": {"message": "unknown model"}}
    async with serve(json_reply(400, body), Reply()) as server:
        with pytest.raises(ModelError):
            await collect(openai(server.url))
    assert len(server.requests) == 1
