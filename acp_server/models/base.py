"""The provider interface: the conversation given to a model and the events it streams back.

Everything is a plain frozen msgspec Struct so requests and events can be logged, compared in
tests and journalled without conversion. Tagged unions use their own tag field: parts by
`type`, conversation items by `role`, stream events by `event`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Literal, Protocol, cast

from msgspec import Struct

from acp_server.cancellation import TurnSignal
from acp_server.redaction import redact

# --- conversation -------------------------------------------------------------------------


class TextPart(Struct, kw_only=True, frozen=True, tag_field="type", tag="text"):
    """Plain text in a user message."""

    text: str


class ImagePart(Struct, kw_only=True, frozen=True, tag_field="type", tag="image"):
    """An image in a user message; `data` is base64."""

    data: str
    mime_type: str


Part = TextPart | ImagePart
"""One piece of a user message."""


class ToolSpec(Struct, kw_only=True, frozen=True):
    """A tool the model may call; `parameters` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


class ToolCallRequest(Struct, kw_only=True, frozen=True):
    """A call the model asked for; `call_id` is unique within the session.

    `arguments_error` says why the model's arguments could not be used (not JSON, not an
    object); `arguments` is then empty and the call fails with that message, so the model can
    correct itself.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    arguments_error: str | None = None


class UserMessage(Struct, kw_only=True, frozen=True, tag_field="role", tag="user"):
    """A user message in the conversation."""

    parts: list[Part]


class AssistantMessage(Struct, kw_only=True, frozen=True, tag_field="role", tag="assistant"):
    """A previous assistant message, with the tool calls it made."""

    text: str
    tool_calls: list[ToolCallRequest] = []


class ToolResultMessage(Struct, kw_only=True, frozen=True, tag_field="role", tag="tool"):
    """A tool's result fed back to the model; `images` (from `read_file` of an image) go to
    models that take images, each provider placing them where its API allows (see
    `acp_server.models.images`)."""

    call_id: str
    output: str
    is_error: bool = False
    images: list[ImagePart] = []


ConversationItem = UserMessage | AssistantMessage | ToolResultMessage
"""One entry of the conversation, tagged by `role`."""


class ModelRequest(Struct, kw_only=True, frozen=True):
    """One request to a model."""

    session_id: str
    system_prompt: str
    messages: list[ConversationItem]
    tools: list[ToolSpec]
    max_output_tokens: int | None = None
    temperature: float | None = None
    """The sampling temperature asked for; None: none is sent (the server's default). The
    model's configured `temperature` wins over it (`HttpOptions.sampled`)."""
    status: str | None = None
    """A note on the session's state now (its background commands), sent after the
    conversation as the user's words; never recorded, and kept out of prompt caching (see
    docs/rfc/implemented/architecture/2026-12-06-background-work.md)."""


# --- stream events ------------------------------------------------------------------------

FinishReason = Literal["stop", "tool_calls", "max_tokens", "refusal"]
"""Why a response ended."""


class TextDelta(Struct, kw_only=True, frozen=True, tag_field="event", tag="text"):
    """One chunk of assistant text."""

    text: str


class ThoughtDelta(Struct, kw_only=True, frozen=True, tag_field="event", tag="thought"):
    """One chunk of reasoning."""

    text: str


class ToolCallEvent(Struct, kw_only=True, frozen=True, tag_field="event", tag="tool_call"):
    """The model asks for a tool call."""

    call: ToolCallRequest


class ToolCallDraft(Struct, kw_only=True, frozen=True, tag_field="event", tag="tool_call_draft"):
    """A tool call being written, for progress only: the first draft of a call comes as soon
    as its name has streamed (`arguments` empty or what arrived with it), later ones carry the
    next piece of its arguments. The call itself still comes as one `ToolCallEvent` with the
    same `call_id` when it is complete, or never, when the response was cut before that."""

    call_id: str
    name: str
    arguments: str = ""


class Usage(Struct, kw_only=True, frozen=True, tag_field="event", tag="usage"):
    """Token counts of this request. `input_tokens` is everything the context held, cached or
    not; `cache_read_tokens` is the part of it read from the provider's prompt cache and
    `cache_write_tokens` the part written to it (0 where the provider does not say)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def plus(self, other: Usage) -> Usage:
        """The sum of two requests' counts (a turn's usage over its steps)."""
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class Finish(Struct, kw_only=True, frozen=True, tag_field="event", tag="finish"):
    """The last event of every stream that does not raise."""

    reason: FinishReason


ModelEvent = TextDelta | ThoughtDelta | ToolCallDraft | ToolCallEvent | Usage | Finish
"""What a stream yields, tagged by `event`."""


# --- errors -------------------------------------------------------------------------------


class ModelError(Exception):
    """The provider failed; `message` is shown to the user, `code` is optional detail.

    The message is redacted here: it quotes servers' error bodies and URLs, and travels to
    the client, the journal, the log and a parent agent's tool result."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        message = redact(message)
        super().__init__(message)
        self.message = message
        self.code = code


class ContextWindowExceeded(ModelError):
    """The server refused the request because it does not fit the model's context window.

    `request_tokens` and `window` are what is known of the sizes: the server's numbers where it
    gave them, else (after `completed`) the agent's estimate and resolved window.
    """

    def __init__(
        self,
        label: str,
        *,
        request_tokens: int | None,
        window: int | None,
        server_said: str,
        estimated: bool = False,
    ) -> None:
        self.label = label
        self.request_tokens = request_tokens
        self.window = window
        self.server_said = server_said
        self.estimated = estimated
        if request_tokens is None:
            request = "the request"
        else:
            request = f"a request of {'about ' if estimated else ''}{request_tokens} tokens"
        size = f"the {window}-token context window" if window is not None else "the context window"
        said = f' The server said: "{server_said}"' if server_said else ""
        super().__init__(
            f"{label}: the conversation no longer fits the model: {request} does not fit in "
            f"{size}.{said} Start a new session, or continue with shorter requests and "
            "attachments.",
            code="context_window_exceeded",
        )

    def completed(self, estimate: int, window: int) -> ContextWindowExceeded:
        """This error with the sizes the server did not give filled in from the agent's own
        estimate and window."""
        known = self.request_tokens is not None
        return ContextWindowExceeded(
            self.label,
            request_tokens=self.request_tokens if known else estimate,
            window=self.window if self.window is not None else window,
            server_said=self.server_said,
            estimated=not known,
        )


class ModelConfigError(Exception):
    """A bad `--model` spec or model script; raised at load time, before any session runs."""


# --- the provider -------------------------------------------------------------------------


class ModelProvider(Protocol):
    """A model behind one streaming call."""

    name: str
    """How the provider was selected, e.g. `script:/path/x.json` or `echo`."""

    def stream(self, request: ModelRequest, signal: TurnSignal) -> AsyncGenerator[ModelEvent, None]:
        """One model request. Yields events, ends with exactly one Finish (unless it raises).

        Honours `signal`: when it aborts, the stream stops promptly (waits and delays are
        interrupted at once via `signal.linked_scope()`) and raises `TurnAborted`. Raises
        `ModelError` for provider failures.

        Typed as an async generator (not just an iterator) so callers can `aclose()` it, e.g.
        with `contextlib.aclosing`, and a provider's network stream is released at once when
        the caller stops reading early.
        """
        ...


def subagent_provider(provider: ModelProvider) -> ModelProvider:
    """The provider a subagent's child session uses.

    `provider.for_subagent()` when the provider has one (the scripted provider does: it may
    follow a separate script), else the provider itself.
    """
    for_subagent = getattr(provider, "for_subagent", None)
    if callable(for_subagent):
        return cast(ModelProvider, for_subagent())
    return provider
