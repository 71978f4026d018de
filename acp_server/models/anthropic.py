"""`anthropic:MODEL`: the Anthropic Messages API, streamed over SSE.

- A key is required (`ANTHROPIC_API_KEY` by default; sent as `x-api-key`, with the API
  version header); `ANTHROPIC_BASE_URL` overrides the public endpoint. Those facts are the
  registry row's (`acp_server.models.providers`).
- The system prompt goes in `system`; tool results are `tool_result` blocks of a user message,
  earlier tool calls `tool_use` blocks of the assistant's; images are base64 `image` blocks.
  `max_tokens` is required by the API: the request's, else 8192.
- Events: `message_start` (input tokens), `content_block_start` / `_delta` / `_stop` for
  text, thinking (-> ThoughtDelta) and tool_use (its `input_json_delta` pieces are joined
  and parsed when the block stops), `message_delta` (stop reason, output tokens),
  `message_stop`; `ping` and `signature_delta` are ignored, and an `error` event raises
  `ModelError` with its type and message.
- `stop_reason`: end_turn and stop_sequence -> stop, tool_use -> tool_calls, max_tokens ->
  max_tokens, refusal -> refusal, anything else (pause_turn, ...) -> stop.
- Tool calls are emitted at the end of the message. Arguments that are not a JSON object
  make a call with `arguments_error` (the loop answers it to the model); when the output limit
  cut the message, such a call was unfinished and is left out.
- Prompt caching: the last tool, the system prompt and the last block of the latest message
  are marked `cache_control: {"type": "ephemeral"}` (three of the four breakpoints the API
  allows), so each request reads the previous one's prefix from the cache; `Usage` counts
  `cache_read_input_tokens` as `cache_read_tokens` and `cache_creation_input_tokens` as
  `cache_write_tokens`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import Any, TypeVar

import msgspec
from msgspec import Struct

from acp_server.cancellation import TurnSignal
from acp_server.models.base import (
    AssistantMessage,
    Finish,
    FinishReason,
    ImagePart,
    ModelError,
    ModelEvent,
    ModelRequest,
    TextDelta,
    TextPart,
    ThoughtDelta,
    ToolCallDraft,
    ToolCallEvent,
    ToolCallRequest,
    ToolResultMessage,
    Usage,
)
from acp_server.models.http import (
    Endpoint,
    HttpOptions,
    SseSession,
    incomplete_stream,
    malformed_chunk,
)
from acp_server.models.images import has_tool_images, without_tool_images
from acp_server.models.overflow import overflow_from_error
from acp_server.models.providers import PROVIDERS
from acp_server.models.window import ContextWindow

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "AnthropicProvider",
    "request_body",
]

_ROW = PROVIDERS["anthropic"]
DEFAULT_BASE_URL = _ROW.hosted.base_url
DEFAULT_MAX_TOKENS = 8192

_T = TypeVar("_T")

_EPHEMERAL = {"type": "ephemeral"}
"""A prompt-cache breakpoint: the prefix up to the marked block is cached for a few minutes."""

_STOP: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}

# --- the request ----------------------------------------------------------------------------


def _image_block(image: ImagePart) -> dict[str, Any]:
    source = {"type": "base64", "media_type": image.mime_type, "data": image.data}
    return {"type": "image", "source": source}


def request_body(
    model: str, request: ModelRequest, default_max_tokens: int = DEFAULT_MAX_TOKENS
) -> dict[str, Any]:
    """The Messages API request for `request` (streaming).

    Consecutive items of one role share a message (the API wants the tool results answering
    one assistant message together in the next user message); empty text is left out, since
    the API rejects empty text blocks.
    """
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for item in request.messages:
        if isinstance(item, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            if item.text:
                blocks.append({"type": "text", "text": item.text})
            blocks.extend(
                {"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments}
                for call in item.tool_calls
            )
            add("assistant", blocks)
        elif isinstance(item, ToolResultMessage):
            content: str | list[dict[str, Any]] = item.output
            if item.images:  # a tool result may hold image blocks beside its text
                content = [{"type": "text", "text": item.output}]
                content.extend(_image_block(image) for image in item.images)
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": item.call_id,
                "content": content,
            }
            if item.is_error:
                block["is_error"] = True
            add("user", [block])
        else:
            blocks = []
            for part in item.parts:
                if isinstance(part, TextPart):
                    if part.text:
                        blocks.append({"type": "text", "text": part.text})
                else:
                    blocks.append(_image_block(part))
            add("user", blocks)
    if messages:
        messages[-1]["content"][-1] = {**messages[-1]["content"][-1], "cache_control": _EPHEMERAL}
    if request.status:
        # After the cache breakpoint: the next request's prefix is the same without it.
        add("user", [{"type": "text", "text": request.status}])
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_output_tokens or default_max_tokens,
        "messages": messages,
        "stream": True,
    }
    if request.system_prompt:
        body["system"] = [
            {"type": "text", "text": request.system_prompt, "cache_control": _EPHEMERAL}
        ]
    if request.tools:
        tools: list[dict[str, Any]] = [
            {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
            for tool in request.tools
        ]
        tools[-1]["cache_control"] = _EPHEMERAL
        body["tools"] = tools
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


# --- the stream -----------------------------------------------------------------------------


class _Usage(Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None

    def input_total(self) -> int | None:
        """Every input token, cached or not: what the context holds."""
        parts = (self.input_tokens, self.cache_creation_input_tokens, self.cache_read_input_tokens)
        if all(part is None for part in parts):
            return None
        return sum(part or 0 for part in parts)


class _Message(Struct):
    usage: _Usage | None = None


class _MessageStart(Struct):
    message: _Message


class _ContentBlock(Struct):
    type: str
    id: str | None = None
    name: str | None = None
    text: str | None = None
    thinking: str | None = None
    input: Any = None


class _BlockStart(Struct):
    index: int
    content_block: _ContentBlock


class _BlockDeltaBody(Struct):
    type: str
    text: str | None = None
    thinking: str | None = None
    partial_json: str | None = None


class _BlockDelta(Struct):
    index: int
    delta: _BlockDeltaBody


class _BlockStop(Struct):
    index: int


class _MessageDeltaBody(Struct):
    stop_reason: str | None = None


class _MessageDelta(Struct):
    delta: _MessageDeltaBody
    usage: _Usage | None = None


class _ErrorBody(Struct):
    type: str = "error"
    message: str = ""


class _ErrorEvent(Struct):
    error: _ErrorBody


class _Typed(Struct):
    type: str = ""


_decode_start = msgspec.json.Decoder(_MessageStart).decode
_decode_block_start = msgspec.json.Decoder(_BlockStart).decode
_decode_block_delta = msgspec.json.Decoder(_BlockDelta).decode
_decode_block_stop = msgspec.json.Decoder(_BlockStop).decode
_decode_message_delta = msgspec.json.Decoder(_MessageDelta).decode
_decode_error = msgspec.json.Decoder(_ErrorEvent).decode
_decode_typed = msgspec.json.Decoder(_Typed).decode


class _ToolBlock:
    __slots__ = ("call_id", "initial", "name", "parts")

    def __init__(self, call_id: str, name: str, initial: Any) -> None:
        self.call_id = call_id
        self.name = name
        self.initial = initial
        self.parts: list[str] = []


class AnthropicProvider:
    """`anthropic:MODEL` over the Messages API."""

    __slots__ = ("_api_key", "_http", "default_max_tokens", "endpoint", "name", "text_tool_calls")

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        key_env: str = _ROW.key_variable,
        base_url_env: str = _ROW.base_url_variable,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        options: HttpOptions | None = None,
        text_tool_calls: bool | None = None,
    ) -> None:
        self.name = f"anthropic:{model}"
        self.endpoint = Endpoint(
            "anthropic", model, base_url.rstrip("/"), key_env, base_url_env, key_set=bool(api_key)
        )
        self._api_key = api_key or None
        self._http = SseSession(self.endpoint, options or HttpOptions())
        self.text_tool_calls = bool(text_tool_calls)  # off unless the config turns it on
        configured = self._http.options.max_output_tokens
        self.default_max_tokens = configured if configured is not None else default_max_tokens

    @property
    def edit_format(self) -> str | None:
        """The configured edit format (None: the agent's default)."""
        return self._http.options.edit_format

    @property
    def auto_test(self) -> bool | None:
        """Whether the agent runs the tests after this model's edits, as configured (None:
        the agent's default)."""
        return self._http.options.auto_test

    @property
    def max_output_tokens(self) -> int:
        """The configured output limit, else the default (the loop bounds every request)."""
        return self.default_max_tokens

    async def takes_images(self, signal: TurnSignal) -> bool:
        """Claude models take images, unless the config file's `images` says otherwise."""
        return self._http.options.images is not False

    async def aclose(self) -> None:
        """Close the HTTP client; the provider stays usable (a new one opens on demand)."""
        await self._http.aclose()

    async def context_window(self, signal: TurnSignal) -> ContextWindow:
        """The configured window, else the default for Claude models (the API has no way to
        ask)."""
        configured = self._http.options.context_window
        if configured is not None:
            return ContextWindow(configured, "config", "context_window in the config file")
        return ContextWindow(_ROW.hosted.window, "default", "default for Anthropic models")

    async def stream(
        self, request: ModelRequest, signal: TurnSignal
    ) -> AsyncGenerator[ModelEvent, None]:
        """One streamed message; see the module docstring."""
        signal.raise_if_aborted()
        if has_tool_images(request) and not await self.takes_images(signal):
            request = without_tool_images(request)
        endpoint = self.endpoint
        if self._api_key is None:
            raise ModelError(
                f"{endpoint.label}: no API key. Set {endpoint.key_env} to an Anthropic API key.",
                code="no_api_key",
            )
        headers = _ROW.auth_headers(self._api_key)
        request = self._http.options.sampled(request)
        body = msgspec.json.encode(request_body(endpoint.model, request, self.default_max_tokens))
        tools: dict[int, _ToolBlock] = {}
        call_ids: set[str] = set()  # this response's: a server repeating one gets one of ours
        finished: list[ToolCallRequest] = []
        input_tokens: int | None = None
        output_tokens: int | None = None
        cache_read: int | None = None
        cache_write: int | None = None
        stop_reason: str | None = None
        stopped = False
        events = self._http.events("/v1/messages", headers, body, signal)
        async with aclosing(events):
            async for sse in events:
                kind = sse.event
                data = sse.data
                if kind == "message" and data:  # no `event:` line: use the data's type
                    kind = _decode(endpoint, _decode_typed, data).type
                if kind == "content_block_delta":
                    delta = _decode(endpoint, _decode_block_delta, data)
                    part = delta.delta
                    if part.type == "text_delta":
                        if part.text:
                            yield TextDelta(text=part.text)
                    elif part.type == "thinking_delta":
                        if part.thinking:
                            yield ThoughtDelta(text=part.thinking)
                    elif part.type == "input_json_delta":
                        tool = tools.get(delta.index)
                        if tool is not None and part.partial_json:
                            tool.parts.append(part.partial_json)
                            yield ToolCallDraft(
                                call_id=tool.call_id, name=tool.name, arguments=part.partial_json
                            )
                elif kind == "content_block_start":
                    start = _decode(endpoint, _decode_block_start, data)
                    block = start.content_block
                    if block.type == "text":
                        if block.text:
                            yield TextDelta(text=block.text)
                    elif block.type == "thinking":
                        if block.thinking:
                            yield ThoughtDelta(text=block.thinking)
                    elif block.type == "tool_use":
                        if not block.id or not block.name:
                            raise malformed_chunk(endpoint, data, "tool_use without id or name")
                        call_id = block.id
                        if call_id in call_ids:
                            # Two calls under one id: the model step would take them for one,
                            # and their results could not be told apart in the next request.
                            call_id = f"toolu_{uuid.uuid4().hex[:24]}"
                        call_ids.add(call_id)
                        tools[start.index] = _ToolBlock(call_id, block.name, block.input)
                        yield ToolCallDraft(call_id=call_id, name=block.name)
                elif kind == "content_block_stop":
                    index = _decode(endpoint, _decode_block_stop, data).index
                    tool = tools.pop(index, None)
                    if tool is not None:
                        finished.append(_tool_call(tool))
                elif kind == "message_start":
                    usage = _decode(endpoint, _decode_start, data).message.usage
                    if usage is not None:
                        input_tokens = usage.input_total()
                        output_tokens = usage.output_tokens
                        cache_read = usage.cache_read_input_tokens
                        cache_write = usage.cache_creation_input_tokens
                elif kind == "message_delta":
                    message_delta = _decode(endpoint, _decode_message_delta, data)
                    if message_delta.delta.stop_reason is not None:
                        stop_reason = message_delta.delta.stop_reason
                    usage = message_delta.usage
                    if usage is not None:
                        input_tokens = usage.input_total() or input_tokens
                        if usage.output_tokens is not None:
                            output_tokens = usage.output_tokens
                        if usage.cache_read_input_tokens is not None:
                            cache_read = usage.cache_read_input_tokens
                        if usage.cache_creation_input_tokens is not None:
                            cache_write = usage.cache_creation_input_tokens
                elif kind == "message_stop":
                    stopped = True
                    break
                elif kind == "error":
                    error = _decode(endpoint, _decode_error, data).error
                    overflow = overflow_from_error(
                        endpoint.label, {"type": error.type, "message": error.message}
                    )
                    if overflow is not None:
                        raise overflow
                    raise ModelError(
                        f"{endpoint.label}: the server reported an error mid-stream "
                        f"({error.type}): {error.message}",
                        code=error.type,
                    )
                # ping and event types added later are ignored
        if not stopped and stop_reason is None:
            raise incomplete_stream(endpoint)
        finished.extend(_tool_call(tool) for tool in tools.values())  # blocks never stopped
        for call in finished:
            if stop_reason == "max_tokens" and call.arguments_error is not None:
                continue  # cut off by the output limit
            yield ToolCallEvent(call=call)
        signal.raise_if_aborted()
        if input_tokens is not None or output_tokens is not None:
            yield Usage(
                input_tokens=input_tokens or 0,
                output_tokens=output_tokens or 0,
                cache_read_tokens=cache_read or 0,
                cache_write_tokens=cache_write or 0,
            )
        yield Finish(reason=_STOP.get(stop_reason or "", "stop"))


def _decode(endpoint: Endpoint, decode: Callable[[str], _T], data: str) -> _T:
    """Decode one event's data; malformed JSON or shapes become a ModelError."""
    try:
        return decode(data)
    except msgspec.DecodeError as exc:
        raise malformed_chunk(endpoint, data, str(exc)) from None


def _tool_call(tool: _ToolBlock) -> ToolCallRequest:
    """Parse the joined `partial_json` of a finished tool_use block; arguments that are not a
    JSON object give a call with `arguments_error` set."""
    text = "".join(tool.parts).strip()
    problem: str | None = None
    arguments: Any = {}
    if not text:
        arguments = tool.initial if isinstance(tool.initial, dict) else {}
    else:
        try:
            arguments = msgspec.json.decode(text)
        except msgspec.DecodeError as exc:
            problem = f"the arguments are not valid JSON ({exc}): {text[:200]!r}"
        if problem is None and not isinstance(arguments, dict):
            problem = f"the arguments are not a JSON object: {text[:200]!r}"
    return ToolCallRequest(
        call_id=tool.call_id,
        name=tool.name,
        arguments=arguments if problem is None else {},
        arguments_error=problem,
    )
