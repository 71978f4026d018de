"""`openai:MODEL`: an OpenAI-compatible Chat Completions endpoint, streamed over SSE.

Works with the hosted API and with compatible servers (vLLM, llama.cpp's server, Ollama):

- the base URL defaults to `https://api.openai.com/v1` (`OPENAI_BASE_URL` overrides it);
- the API key is optional: without one no `Authorization` header is sent (local servers);
- text arrives in `delta.content`, reasoning in `delta.reasoning_content` or `delta.reasoning`;
- tool calls are assembled by `index` from `delta.tool_calls[]`: `id`, `type` and
  `function.name` are *set* whenever present (llama.cpp repeats them in every delta), only
  `function.arguments` is appended; a `ToolCallDraft` is yielded once a call's name is known
  (its id is fixed then) and for each later piece of its arguments; the calls are emitted when
  the choice finishes;
- `finish_reason` maps `stop`, `tool_calls`, `length` (-> max_tokens) and `content_filter`
  (-> refusal); anything else counts as `stop`;
- with `stream_options.include_usage` the last chunk carries `usage`, emitted as `Usage` just
  before the single `Finish`, which follows `data: [DONE]` (or the end of the body, if the
  choice had finished).

Over 500 lines: one wire format: Chat Completions, its request builder, chunk parser and
tool-call assembly by index, read and changed together.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any

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
    SseEvent,
    SseSession,
    incomplete_stream,
    malformed_chunk,
)
from acp_server.models.images import VisionSupport, has_tool_images, without_tool_images
from acp_server.models.output import DEFAULT_OUTPUT_TOKENS
from acp_server.models.overflow import overflow_from_error
from acp_server.models.providers import PROVIDERS
from acp_server.models.window import ContextWindow, DiscoveredWindow

__all__ = ["DEFAULT_BASE_URL", "OpenAIProvider", "request_body"]

_ROW = PROVIDERS["openai"]
DEFAULT_BASE_URL = _ROW.hosted.base_url

log = logging.getLogger(__name__)

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "max_tokens",
    "content_filter": "refusal",
}

# --- the request ----------------------------------------------------------------------------


def _user_content(parts: list[TextPart | ImagePart]) -> str | list[dict[str, Any]]:
    """A plain string when the message is all text (every server accepts that), else parts."""
    if all(isinstance(part, TextPart) for part in parts):
        return "\n".join(part.text for part in parts if isinstance(part, TextPart))
    content: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        else:
            url = f"data:{part.mime_type};base64,{part.data}"
            content.append({"type": "image_url", "image_url": {"url": url}})
    return content


def _as_parts(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _tool_images(turn: ToolResultMessage) -> list[dict[str, Any]]:
    """A tool result's images as user-message parts, introduced by the call they came from."""
    if not turn.images:
        return []
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": f"[image(s) returned by tool call {turn.call_id}]"}
    ]
    for image in turn.images:
        url = f"data:{image.mime_type};base64,{image.data}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _tool_output(turn: ToolResultMessage) -> str:
    if turn.is_error and not turn.output.lower().startswith("error"):
        return f"Error: {turn.output}"
    return turn.output


def request_body(
    model: str,
    request: ModelRequest,
    usage_in_stream: bool = True,
    output_field: str = "max_tokens",
) -> dict[str, Any]:
    """The Chat Completions request for `request` (streaming; asking for usage in the stream
    unless `usage_in_stream` is False). The output budget goes in `output_field`: the OpenAI
    API wants `max_completion_tokens` (its reasoning models refuse `max_tokens`), compatible
    servers read `max_tokens`."""
    messages: list[dict[str, Any]] = []
    # A tool message takes only text: the images of a step's tool results follow those
    # results as a user message (the start of the next user message, when one follows).
    images: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt})
    for item in request.messages:
        if images and isinstance(item, AssistantMessage):
            messages.append({"role": "user", "content": images})
            images = []
        if isinstance(item, AssistantMessage):
            message: dict[str, Any] = {"role": "assistant"}
            if item.tool_calls:
                message["content"] = item.text or None
                message["tool_calls"] = [
                    {
                        "id": call.call_id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": msgspec.json.encode(call.arguments).decode(),
                        },
                    }
                    for call in item.tool_calls
                ]
            else:
                message["content"] = item.text
            messages.append(message)
        elif isinstance(item, ToolResultMessage):
            messages.append(
                {"role": "tool", "tool_call_id": item.call_id, "content": _tool_output(item)}
            )
            images.extend(_tool_images(item))
        else:
            content = _user_content(item.parts)
            if images:
                content = [*images, *_as_parts(content)]
                images = []
            messages.append({"role": "user", "content": content})
    if images:
        messages.append({"role": "user", "content": images})
    if request.status:
        messages.append({"role": "user", "content": request.status})  # after the cached prefix
    body: dict[str, Any] = {"model": model, "messages": messages, "stream": True}
    if usage_in_stream:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in request.tools
        ]
    if request.max_output_tokens is not None:
        body[output_field] = request.max_output_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


# --- the stream -----------------------------------------------------------------------------


class _FunctionDelta(Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCallDelta(Struct):
    index: int | None = None
    id: str | None = None
    type: str | None = None
    function: _FunctionDelta | None = None


class _Delta(Struct):
    content: str | None = None
    reasoning_content: Any = None
    reasoning: Any = None
    tool_calls: list[_ToolCallDelta] | None = None


class _Choice(Struct):
    index: int = 0
    delta: _Delta | None = None
    finish_reason: str | None = None


class _PromptDetails(Struct):
    cached_tokens: int | None = None


class _Usage(Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _PromptDetails | None = None


def _usage(usage: _Usage) -> Usage:
    details = usage.prompt_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=(details.cached_tokens or 0) if details is not None else 0,
    )


class _Chunk(Struct):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    error: Any = None


_decode_chunk = msgspec.json.Decoder(_Chunk).decode


class _PendingCall:
    __slots__ = ("arguments", "call_id", "drafted", "name")

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []
        self.drafted = False


def _stream_error(endpoint: Endpoint, error: Any) -> ModelError:
    """An `{"error": ...}` chunk inside the stream (OpenAI, vLLM and others send these)."""
    overflow = overflow_from_error(endpoint.label, error)
    if overflow is not None:
        return overflow
    message: Any = error
    code: str | None = None
    if isinstance(error, dict):
        message = error.get("message", error)
        kind = error.get("type") or error.get("code")
        code = str(kind) if kind is not None else None
    kind_text = f" ({code})" if code else ""
    return ModelError(
        f"{endpoint.label}: the server reported an error mid-stream{kind_text}: {message}",
        code=code or "stream_error",
    )


class OpenAIProvider:
    """`openai:MODEL` over an OpenAI-compatible `/chat/completions` endpoint."""

    __slots__ = (
        "_api_key",
        "_http",
        "_output_field",
        "_usage_in_stream",
        "_vision",
        "_window",
        "endpoint",
        "name",
        "text_tool_calls",
    )

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        key_env: str = _ROW.key_variable,
        base_url_env: str = _ROW.base_url_variable,
        options: HttpOptions | None = None,
        text_tool_calls: bool | None = None,
    ) -> None:
        self.name = f"openai:{model}"
        self.endpoint = Endpoint(
            "openai", model, base_url.rstrip("/"), key_env, base_url_env, key_set=bool(api_key)
        )
        self._api_key = api_key or None
        self._http = SseSession(self.endpoint, options or HttpOptions())
        self._usage_in_stream = True
        configured = self._http.options.context_window
        server = _ROW.server_at(self.endpoint.base_url)
        public = server is _ROW.hosted
        self._output_field = "max_completion_tokens" if public else "max_tokens"
        # Local models write calls as text; OpenAI's never do (acp_server/agent/text_calls.py).
        self.text_tool_calls = (not public) if text_tool_calls is None else text_tool_calls
        default = ContextWindow(
            server.window,
            "default",
            "default for " + ("the OpenAI API" if public else "OpenAI-compatible servers"),
        )
        self._window = DiscoveredWindow(
            self.name,
            ContextWindow(configured, "config", "context_window in the config file")
            if configured is not None
            else default
            if public  # its /models lists no sizes: nothing to ask
            else None,
            default,
        )
        images = self._http.options.images
        self._vision = VisionSupport(self.name, True if images is None and public else images)

    async def takes_images(self, signal: TurnSignal) -> bool:
        """Whether the model takes images (`acp_server.models.images`); the first call may ask
        the server, later ones answer from memory."""
        return await self._vision.get(
            self._http.client(), self.endpoint.base_url.removesuffix("/v1"), self._headers(), signal
        )

    async def aclose(self) -> None:
        """Close the HTTP client; the provider stays usable (a new one opens on demand)."""
        await self._http.aclose()

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
        """The configured output limit, else the default (`acp_server.models.output`)."""
        return self._http.options.max_output_tokens or DEFAULT_OUTPUT_TOKENS

    async def context_window(self, signal: TurnSignal) -> ContextWindow:
        """The model's context window (see `acp_server.models.window`); the first call may ask
        the server, later ones answer from memory."""
        return await self._window.get(
            self._http.client(),
            self.endpoint.base_url,
            _ROW.models_url(self.endpoint.base_url),
            self.endpoint.model,
            self._headers(),
            signal,
        )

    def _headers(self) -> Mapping[str, str]:
        return _ROW.auth_headers(self._api_key)

    async def stream(
        self, request: ModelRequest, signal: TurnSignal
    ) -> AsyncGenerator[ModelEvent, None]:
        """One streamed chat completion; see the module docstring."""
        signal.raise_if_aborted()
        if has_tool_images(request) and not await self.takes_images(signal):
            request = without_tool_images(request)
        endpoint = self.endpoint
        calls: dict[int, _PendingCall] = {}
        call_ids: set[str] = set()
        finish: FinishReason | None = None
        usage: Usage | None = None
        done = False
        events = self._events(request, signal)
        async with aclosing(events):
            async for sse in events:
                data = sse.data
                if data.strip() == "[DONE]":
                    done = True
                    break
                if not data:
                    continue
                try:
                    chunk = _decode_chunk(data)
                except msgspec.DecodeError as exc:
                    raise malformed_chunk(endpoint, data, str(exc)) from None
                if chunk.error is not None:
                    raise _stream_error(endpoint, chunk.error)
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or ():
                    if choice.index != 0:
                        continue
                    delta = choice.delta
                    if delta is not None:
                        # Some servers send both fields with the same text: use one.
                        reasoning = delta.reasoning_content or delta.reasoning
                        if isinstance(reasoning, str) and reasoning:
                            yield ThoughtDelta(text=reasoning)
                        if delta.content:
                            yield TextDelta(text=delta.content)
                        if delta.tool_calls:
                            for draft in _merge_tool_calls(calls, delta.tool_calls, call_ids):
                                yield draft
                    if choice.finish_reason and finish is None:
                        finish = _FINISH.get(choice.finish_reason, "stop")
                        for event in _finished_calls(endpoint, calls, finish == "max_tokens"):
                            yield event
                        calls.clear()
        if finish is None:
            if not done:
                raise incomplete_stream(endpoint)
            # [DONE] without a finish_reason: some servers omit it; what arrived is complete.
            finish = "tool_calls" if calls else "stop"
        # Deltas that came after the finish.
        for event in _finished_calls(endpoint, calls, finish == "max_tokens"):
            yield event
        signal.raise_if_aborted()
        if usage is not None:
            yield usage
        yield Finish(reason=finish)

    async def _events(
        self, request: ModelRequest, signal: TurnSignal
    ) -> AsyncGenerator[SseEvent, None]:
        """The answer's server-sent events. A server that rejects `stream_options` (HTTP 400
        naming it) is asked again without it, and never again with it: such servers then
        report no usage, and the context budget guesses instead."""
        retry_without_usage = False
        request = self._http.options.sampled(request)
        body = request_body(self.endpoint.model, request, self._usage_in_stream, self._output_field)
        events = self._http.events("/chat/completions", self._headers(), _encode(body), signal)
        async with aclosing(events):
            try:
                async for sse in events:
                    yield sse
            except ModelError as exc:
                if not (self._usage_in_stream and _rejects_stream_options(exc)):
                    raise
                retry_without_usage = True
        if retry_without_usage:
            log.info("%s: the server rejects stream_options; usage is not asked for", self.name)
            self._usage_in_stream = False
            body = request_body(self.endpoint.model, request, False, self._output_field)
            events = self._http.events("/chat/completions", self._headers(), _encode(body), signal)
            async with aclosing(events):
                async for sse in events:
                    yield sse


def _encode(body: dict[str, Any]) -> bytes:
    return msgspec.json.encode(body)


def _rejects_stream_options(error: ModelError) -> bool:
    """A 400/422 answer (before any event) whose message names `stream_options`."""
    return error.code in ("http_400", "http_422") and "stream_options" in error.message


def _merge_tool_calls(
    calls: dict[int, _PendingCall], deltas: list[_ToolCallDelta], ids: set[str]
) -> list[ToolCallDraft]:
    """Fold one chunk's tool-call deltas into the pending calls, by `index`; returns the drafts
    to show: a call's first once its name is known (its id is fixed then: a server's id, else
    one of ours, also when an earlier call of the response has the server's: `ids` holds
    theirs), then each new piece of its arguments."""
    drafts: list[ToolCallDraft] = []
    for position, delta in enumerate(deltas):
        index = delta.index if delta.index is not None else position
        pending = calls.get(index)
        if pending is None:
            pending = calls[index] = _PendingCall()
        if delta.id and not pending.drafted:
            pending.call_id = delta.id
        piece = ""
        function = delta.function
        if function is not None:
            if function.name:
                pending.name = function.name
            if function.arguments:
                pending.arguments.append(function.arguments)
                piece = function.arguments
        if pending.name is None:
            continue
        if not pending.drafted:
            pending.drafted = True
            if pending.call_id is None or pending.call_id in ids:
                # Two calls under one id would be one to the agent, and their results could
                # not be told apart in the next request.
                pending.call_id = f"call_{uuid.uuid4().hex[:24]}"
            ids.add(pending.call_id)
            drafts.append(
                ToolCallDraft(
                    call_id=pending.call_id, name=pending.name, arguments="".join(pending.arguments)
                )
            )
        elif piece:
            drafts.append(
                ToolCallDraft(call_id=pending.call_id or "", name=pending.name, arguments=piece)
            )
    return drafts


def _finished_calls(
    endpoint: Endpoint, calls: dict[int, _PendingCall], truncated: bool
) -> list[ToolCallEvent]:
    """The assembled calls in index order.

    Arguments that are not a JSON object make a call with `arguments_error` set (it fails and
    the model is told why). When the output limit cut the response (`truncated`), a call
    without a name or with unusable arguments is an unfinished one and is left out; otherwise
    a nameless call raises ModelError.
    """
    events: list[ToolCallEvent] = []
    for index in sorted(calls):
        pending = calls[index]
        text = "".join(pending.arguments).strip()
        problem: str | None = None
        arguments: Any = {}
        try:
            arguments = msgspec.json.decode(text) if text else {}
        except msgspec.DecodeError as exc:
            problem = f"the arguments are not valid JSON ({exc}): {text[:200]!r}"
        if problem is None and not isinstance(arguments, dict):
            problem = f"the arguments are not a JSON object: {text[:200]!r}"
        if truncated and (problem is not None or not pending.name):
            continue
        if not pending.name:
            raise ModelError(
                f"{endpoint.label}: the model sent tool call {index} without a name.",
                code="bad_tool_call",
            )
        call_id = pending.call_id or f"call_{uuid.uuid4().hex[:24]}"
        call = ToolCallRequest(
            call_id=call_id,
            name=pending.name,
            arguments=arguments if problem is None else {},
            arguments_error=problem,
        )
        events.append(ToolCallEvent(call=call))
    return events
