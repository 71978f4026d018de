"""`openai:MODEL` against a local fake server replaying recorded Chat Completions streams:
text, reasoning, tool calls assembled by index, finish reasons, usage, request shape, and
the shared HTTP behaviour (errors, retries, cut streams, cancellation, laziness)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.models.base import (
    AssistantMessage,
    Finish,
    ImagePart,
    ModelError,
    TextDelta,
    TextPart,
    ToolCallDraft,
    ToolCallEvent,
    ToolCallRequest,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from acp_server.models.http import HttpOptions, close_provider
from acp_server.models.openai import OpenAIProvider
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
    Reply,
    free_port,
    json_reply,
    openai_chunks,
    recorded,
    serve,
    sse_reply,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    yield
    await close_all()


def provider(url: str, *, api_key: str | None = None, **kwargs: Any) -> OpenAIProvider:
    options = kwargs.pop("options", FAST)
    return track(
        OpenAIProvider("gpt-x", base_url=url + "/v1", api_key=api_key, options=options, **kwargs)
    )


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}],
    }


# --- streams --------------------------------------------------------------------------------


async def test_text_stream_with_usage() -> None:
    async with serve(recorded("openai_text")) as server:
        p = provider(server.url)
        events = await collect(p)
        await p.aclose()
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "Hello",
        "! How",
        " can I help?",
    ]
    assert events[-2] == Usage(input_tokens=19, output_tokens=8)
    assert finish(events) == "stop"
    seen = server.requests[0]
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["accept"] == "text/event-stream"
    assert "authorization" not in seen.headers  # no key: local servers


async def test_api_key_is_sent_as_bearer() -> None:
    async with serve(recorded("openai_text")) as server:
        await collect(provider(server.url, api_key="sk-test"))
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_two_tool_calls_assembled_by_index() -> None:
    async with serve(recorded("openai_tool_calls")) as server:
        events = await collect(provider(server.url))
    assert calls(events) == [
        ("call_Ab12", "read_file", {"path": "a.py"}),
        ("call_Cd34", "list_dir", {"path": "src"}),
    ]
    assert events[-2] == Usage(input_tokens=120, output_tokens=41)
    assert finish(events) == "tool_calls"


async def test_interleaved_tool_calls_with_repeated_ids_and_names() -> None:
    """llama.cpp repeats id/type/name in every delta: they are set, never appended."""
    async with serve(recorded("llamacpp_tool_calls")) as server:
        events = await collect(provider(server.url))
    assert calls(events) == [
        ("call__0_read_file_cmpl-5f1e", "read_file", {"path": "a.py"}),
        ("call__1_grep_cmpl-5f1e", "grep", {"pattern": "TODO"}),
    ]
    assert finish(events) == "tool_calls"


async def test_a_second_call_under_an_earlier_calls_id_gets_an_id_of_its_own() -> None:
    """A server numbering badly: two calls of one response as `call_1`. They are drafted and
    completed apart, and their results can be told apart in the next request."""
    deltas = [
        {"index": i, "id": "call_1", "function": {"name": name, "arguments": "{}"}}
        for i, name in enumerate(["read_file", "list_dir"])
    ]
    stream = [chunk({"tool_calls": deltas}), chunk(finish_reason="tool_calls")]
    async with serve(openai_chunks(stream)) as server:
        events = await collect(provider(server.url))
    [(first, _, _), (second, _, _)] = calls(events)
    assert first == "call_1" != second
    drafts = [e.call_id for e in events if isinstance(e, ToolCallDraft)]
    assert drafts == [first, second]


async def test_reasoning_fields_become_thoughts() -> None:
    async with serve(recorded("openai_reasoning")) as server:
        events = await collect(provider(server.url))
    assert thoughts(events) == "The user greets me. Answer briefly. (ollama style)"
    assert texts(events) == "Hi!"
    assert events[-2] == Usage(input_tokens=7, output_tokens=12)
    assert finish(events) == "stop"


async def test_reasoning_sent_in_both_fields_counts_once() -> None:
    both = {"reasoning_content": "think", "reasoning": "think"}
    reply = openai_chunks([chunk(both), chunk({"content": "ok"}), chunk(finish_reason="stop")])
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    assert thoughts(events) == "think"


async def test_empty_finish_reason_is_not_a_finish() -> None:
    """Some servers send `"finish_reason": ""` on every chunk."""
    start = {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "ls", "arguments": ""}}]}
    more = {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}
    reply = openai_chunks(
        [chunk(start, finish_reason=""), chunk(more, ""), chunk(finish_reason="tool_calls")]
    )
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    assert calls(events) == [("c1", "ls", {})]
    assert finish(events) == "tool_calls"


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("stop", "stop"),
        ("tool_calls", "tool_calls"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("function_call", "tool_calls"),
        ("something_new", "stop"),
    ],
)
async def test_finish_reasons(reason: str, expected: str) -> None:
    reply = openai_chunks([chunk({"content": "x"}), chunk(finish_reason=reason)])
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    assert finish(events) == expected
    assert not any(isinstance(e, Usage) for e in events)  # the server sent none


async def test_tool_call_without_arguments_gets_an_empty_object_and_an_id() -> None:
    delta = {"tool_calls": [{"index": 0, "function": {"name": "now"}}]}
    reply = openai_chunks([chunk(delta), chunk(finish_reason="tool_calls")])
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    [(call_id, name, arguments)] = calls(events)
    assert (name, arguments) == ("now", {})
    assert call_id.startswith("call_")


async def test_invalid_tool_arguments_make_a_call_that_says_why() -> None:
    delta = {
        "tool_calls": [{"index": 0, "id": "c", "function": {"name": "grep", "arguments": "{"}}]
    }
    reply = openai_chunks([chunk(delta), chunk(finish_reason="tool_calls")])
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    [call] = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert (call.call_id, call.name, call.arguments) == ("c", "grep", {})
    assert call.arguments_error is not None
    assert call.arguments_error.startswith("the arguments are not valid JSON")
    assert finish(events) == "tool_calls"


async def test_malformed_chunk_names_the_provider() -> None:
    reply = sse_reply(
        'data: {"choices": [{"delta": {"content": "ok"}}]}\n\ndata: {"choices": [\n\n'
    )
    async with serve(reply) as server:
        with pytest.raises(ModelError, match=r"^openai:gpt-x: malformed stream chunk") as info:
            await collect(provider(server.url))
    assert info.value.code == "malformed_chunk"


async def test_wrongly_typed_chunk_is_malformed() -> None:
    reply = sse_reply('data: {"choices": "nope"}\n\n')
    async with serve(reply) as server:
        with pytest.raises(ModelError, match="malformed stream chunk"):
            await collect(provider(server.url))


async def test_error_chunk_mid_stream() -> None:
    reply = openai_chunks(
        [chunk({"content": "a"}), {"error": {"message": "model crashed", "type": "server_error"}}]
    )
    async with serve(reply) as server:
        with pytest.raises(ModelError, match=r"mid-stream \(server_error\): model crashed"):
            await collect(provider(server.url))


async def test_done_without_finish_reason_is_a_stop() -> None:
    reply = openai_chunks([chunk({"content": "hi"})])
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    assert texts(events) == "hi"
    assert finish(events) == "stop"


async def test_finish_without_done_at_a_clean_end_is_accepted() -> None:
    reply = openai_chunks([chunk({"content": "hi"}), chunk(finish_reason="length")], done=False)
    async with serve(reply) as server:
        events = await collect(provider(server.url))
    assert finish(events) == "max_tokens"


@pytest.mark.parametrize("framing", ["close", "chunked"])
async def test_stream_cut_midway(framing: str) -> None:
    """Close framing ends the body cleanly (no finish seen); chunked ends it mid-body."""
    reply = openai_chunks([chunk({"content": "partial"})], done=False)
    reply.framing = framing  # type: ignore[assignment]
    reply.cut = True
    async with serve(reply) as server:
        p = provider(server.url)
        seen: list[Any] = []
        with pytest.raises(ModelError, match="the stream ended before the response was complete"):
            async with aclosing(p.stream(request(), TurnCancellation().signal)) as stream:
                async for event in stream:
                    seen.append(event)
    assert texts(seen) == "partial"
    assert len(server.requests) == 1  # never retried after the first event


async def test_json_body_instead_of_a_stream() -> None:
    reply = json_reply(200, {"error": {"message": "streaming is disabled", "type": "invalid"}})
    async with serve(reply) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url))
    message = info.value.message
    assert message.startswith("openai:gpt-x: the server answered with application/json")
    assert "streaming is disabled" in message


# --- request shape ----------------------------------------------------------------------------


async def test_request_body_shape() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
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
                text="Let me look.",
                tool_calls=[
                    ToolCallRequest(call_id="call_1", name="read", arguments={"path": "a"})
                ],
            ),
            ToolResultMessage(call_id="call_1", output="contents"),
            AssistantMessage(
                text="", tool_calls=[ToolCallRequest(call_id="call_2", name="read", arguments={})]
            ),
            ToolResultMessage(call_id="call_2", output="no such file", is_error=True),
            AssistantMessage(text="Done."),
            UserMessage(parts=[TextPart(text="one"), TextPart(text="two")]),
        ],
        tools=[ToolSpec(name="read", description="Read a file", parameters=schema)],
        max_output_tokens=100,
    )
    async with serve(recorded("openai_text")) as server:
        await collect(provider(server.url), req)
    body = server.requests[0].json()
    assert body["model"] == "gpt-x"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 100
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read", "description": "Read a file", "parameters": schema},
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "contents"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "read", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: no such file"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "one\ntwo"},
    ]


async def test_no_tools_no_max_tokens_no_system() -> None:
    async with serve(recorded("openai_text")) as server:
        await collect(provider(server.url))
    body = server.requests[0].json()
    assert "tools" not in body
    assert "max_tokens" not in body
    assert body["messages"] == [{"role": "user", "content": "hello"}]


# --- HTTP errors --------------------------------------------------------------------------------


async def test_401_names_provider_model_and_fix() -> None:
    reply = json_reply(
        401,
        {
            "error": {
                "message": "Incorrect API key provided: sk-bad.",
                "type": "invalid_request_error",
            }
        },
    )
    async with serve(reply) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url, api_key="sk-bad"))
    message = info.value.message
    assert message.startswith("openai:gpt-x: the API key was rejected (HTTP 401).")
    assert "Incorrect API key provided" in message
    assert message.endswith("Set OPENAI_API_KEY to a valid key.")
    assert info.value.code == "http_401"
    assert len(server.requests) == 1  # not retried


async def test_401_without_a_key_asks_for_one() -> None:
    reply = json_reply(401, {"error": {"message": "You didn't provide an API key."}})
    async with serve(reply) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url))
    message = info.value.message
    assert message.startswith("openai:gpt-x: the server requires an API key (HTTP 401).")
    assert message.endswith("Set OPENAI_API_KEY to a valid key.")


async def test_404_says_check_model_and_base_url() -> None:
    reply = json_reply(404, {"error": "model 'gpt-x' not found"})  # Ollama's shape
    async with serve(reply) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url))
    message = info.value.message
    assert message.startswith("openai:gpt-x: model or endpoint not found (HTTP 404)")
    assert "model 'gpt-x' not found" in message
    assert "Check the model name and OPENAI_BASE_URL" in message


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (400, "the server rejected the request (HTTP 400)"),
        (403, "access denied (HTTP 403)"),
        (413, "too large"),
        (418, "unexpected answer (HTTP 418)"),
    ],
)
async def test_other_statuses(status: int, words: str) -> None:
    async with serve(json_reply(status, {"message": "nope"})) as server:
        with pytest.raises(ModelError, match=r"^openai:gpt-x: ") as info:
            await collect(provider(server.url))
    assert words in info.value.message
    assert '"nope"' in info.value.message
    assert len(server.requests) == 1


async def test_plain_text_error_body_is_excerpted() -> None:
    reply = Reply(status=400, chunks=[b"bad things\n   happened " + b"x" * 1000], framing="length")
    reply.headers = {"content-type": "text/plain"}
    async with serve(reply) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url))
    assert "bad things happened xxx" in info.value.message
    assert len(info.value.message) < 600


# --- retries ----------------------------------------------------------------------------------


async def test_429_with_retry_after_then_success() -> None:
    limited = json_reply(429, {"error": {"message": "slow down"}}, {"retry-after": "1"})
    async with serve(limited, recorded("openai_text")) as server:
        events = await collect(provider(server.url))
    assert texts(events) == "Hello! How can I help?"
    assert len(server.requests) == 2
    waited = server.requests[1].at - server.requests[0].at
    assert waited >= 0.9, waited  # the 1 s the server asked for, not FAST's 10 ms


async def test_retry_after_ms_is_honoured() -> None:
    limited = json_reply(429, {}, {"retry-after-ms": "300"})
    async with serve(limited, recorded("openai_text")) as server:
        await collect(provider(server.url))
    waited = server.requests[1].at - server.requests[0].at
    assert waited >= 0.25, waited  # the 300 ms asked for, not FAST's 10 ms


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529])
async def test_server_errors_are_retried(status: int) -> None:
    async with serve(json_reply(status, {}), recorded("openai_text")) as server:
        events = await collect(provider(server.url))
    assert finish(events) == "stop"
    assert len(server.requests) == 2


async def test_retries_give_up_after_max_attempts() -> None:
    options = HttpOptions(backoff=(0.01, 0.02), max_attempts=3)
    replies = [json_reply(503, {"error": {"message": "busy"}}) for _ in range(5)]
    async with serve(*replies) as server:
        with pytest.raises(ModelError) as info:
            await collect(provider(server.url, options=options))
    assert len(server.requests) == 3
    assert "the server failed (HTTP 503) after 3 attempts" in info.value.message
    assert '"busy"' in info.value.message


async def test_retry_after_beyond_the_limit_fails_at_once() -> None:
    reply = json_reply(429, {}, {"retry-after": "3600"})
    async with serve(reply) as server:
        with pytest.raises(ModelError, match="asked to wait 3600 s"):
            await collect(provider(server.url))
    assert len(server.requests) == 1


async def test_dropped_connection_before_an_answer_is_retried() -> None:
    async with serve(Reply(drop=True), recorded("openai_text")) as server:
        events = await collect(provider(server.url))
    assert finish(events) == "stop"
    assert len(server.requests) == 2


async def test_connection_refused_names_the_base_url_variable() -> None:
    port = await free_port()
    p = provider(f"http://127.0.0.1:{port}", options=HttpOptions(backoff=(0.01,), max_attempts=2))
    with pytest.raises(ModelError) as info:
        await collect(p)
    message = info.value.message
    assert message.startswith(f"openai:gpt-x: cannot connect to http://127.0.0.1:{port}/v1")
    assert "after 2 attempts" in message
    assert "Check OPENAI_BASE_URL" in message


async def test_bad_base_url() -> None:
    p = track(OpenAIProvider("m", base_url="localhost:8080/v1", options=FAST))
    with pytest.raises(ModelError, match="invalid base URL"):
        await collect(p)


async def test_read_timeout_between_chunks() -> None:
    reply = openai_chunks([chunk({"content": "a"}), chunk({"content": "b"})])
    reply.delay = 2.0
    options = HttpOptions(backoff=(0.01,), read_timeout=0.2)
    async with serve(reply) as server:
        with pytest.raises(ModelError, match=r"no data from the server for 0.2 s"):
            await collect(provider(server.url, options=options))


# --- cancellation ---------------------------------------------------------------------------


async def test_slow_stream_cancelled_mid_chunk_closes_the_connection() -> None:
    reply = openai_chunks([chunk({"content": "first"}), chunk({"content": "never"})])
    reply.delay = AN_HOUR
    async with serve(reply) as server:
        # TurnAborted at all shows it came at once, not with the next chunk (an hour away).
        events = await stream_until_aborted(provider(server.url), lambda seen: bool(seen))
        with anyio.fail_after(HANG_GUARD_S):
            await server.requests[0].closed.wait()  # the server saw the connection close
    assert texts(events) == "first"


@pytest.mark.parametrize("wait", ["head_delay", "first_delay"])
async def test_cancel_before_the_first_event(wait: str) -> None:
    """Waiting for the status line, or for the first event after it: both stop at once."""
    reply = openai_chunks([chunk({"content": "late"})])
    setattr(reply, wait, AN_HOUR)
    async with serve(reply) as server:
        events = await stream_until_aborted(provider(server.url), lambda _: bool(server.requests))
        with anyio.fail_after(HANG_GUARD_S):
            await server.requests[0].closed.wait()
    assert events == []
    assert len(server.requests) == 1


async def test_cancel_during_retry_backoff_stops_at_once() -> None:
    limited = json_reply(503, {}, {"retry-after": "30"})
    async with serve(limited, recorded("openai_text")) as server:
        # Without the abort the retry 30 s later would succeed: the stream would end normally.
        events = await stream_until_aborted(provider(server.url), lambda _: bool(server.requests))
    assert events == []
    assert len(server.requests) == 1, "no retry after the abort"


async def test_already_aborted_signal_sends_nothing() -> None:
    cancellation = TurnCancellation()
    cancellation.abort(UserCancel())
    async with serve(recorded("openai_text")) as server:
        with pytest.raises(TurnAborted):
            await collect(provider(server.url), signal=cancellation.signal)
    assert server.requests == []


async def test_consumer_stopping_early_closes_the_connection() -> None:
    reply = openai_chunks([chunk({"content": "one"}), chunk({"content": "two"})])
    reply.delay = AN_HOUR
    async with serve(reply) as server:
        stream = provider(server.url).stream(request(), TurnCancellation().signal)
        async with aclosing(stream):
            async for event in stream:
                assert isinstance(event, TextDelta)
                break
        with anyio.fail_after(HANG_GUARD_S):
            await server.requests[0].closed.wait()


async def test_client_is_reused_and_closed() -> None:
    async with serve(recorded("openai_text"), recorded("openai_text")) as server:
        p = provider(server.url)
        first = await collect(p)
        second = await collect(p)
        await close_provider(p)
        await close_provider(p)  # twice is fine
        assert isinstance(first[-1], Finish) and isinstance(second[-1], Finish)
    assert len(server.requests) == 2


# --- wiring -----------------------------------------------------------------------------------


async def test_load_model_reads_the_environment() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1/", "OPENAI_API_KEY": "sk-env"}
    p = load_model("openai:llama3", environ=env)
    assert isinstance(p, OpenAIProvider)
    assert p.name == "openai:llama3"
    assert p.endpoint.base_url == "http://127.0.0.1:9/v1"
    assert p.endpoint.model == "llama3"


async def test_load_model_defaults_to_the_public_endpoint() -> None:
    p = load_model("openai:gpt-4o", environ={})
    assert isinstance(p, OpenAIProvider)
    assert p.endpoint.base_url == "https://api.openai.com/v1"


async def test_importing_the_spec_module_does_not_import_httpx() -> None:
    code = (
        "import acp_server.models.spec, acp_server.models.openai, acp_server.models.anthropic, "
        "sys; acp_server.models.spec.load_model('openai:m'); "
        "print('httpx' in sys.modules, 'httpx_sse' in sys.modules)"
    )
    result = await anyio.run_process([sys.executable, "-c", code])
    assert result.stdout.decode().split() == ["False", "False"]


async def test_the_status_note_is_the_last_message() -> None:
    from acp_server.models.openai import request_body

    body = request_body("gpt-x", request("hi", status="bg_1 running"))
    assert body["messages"][-2]["role"] == "user"
    assert body["messages"][-1] == {"role": "user", "content": "bg_1 running"}
    assert request_body("gpt-x", request("hi"))["messages"][-1]["content"] != "bg_1 running"
