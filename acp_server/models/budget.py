"""A session's context budget: its model's window, and what the next request will cost.

`ContextBudget` is the one place that answers "does this request fit?". The agent loop calls
`resolve(model, signal)` before each model request (the window, cached per provider, see
`acp_server.models.window`), `estimate(request)` / `over_threshold(request)` to size the
request, and `record_usage(request, usage)` when the provider reported what the request cost.

The estimate: the provider's last reported `prompt_tokens` for an earlier request, plus a
conservative guess (`estimate_items`) for what was added since. When the request does not
extend that earlier one (another model, a compacted history, no report yet) the whole request
is guessed. The guess is bytes / `BYTES_PER_TOKEN` for text, `IMAGE_TOKENS` per image (in a
prompt or a tool result) and `ITEM_OVERHEAD` per message; no tokenizer is downloaded or run.
Why these numbers: docs/rfc/implemented/architecture/2026-12-01-context-budget.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.models.base import (
    AssistantMessage,
    ConversationItem,
    ImagePart,
    ModelRequest,
    ToolResultMessage,
    ToolSpec,
    Usage,
)
from acp_server.models.output import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from acp_server.models.output import MIN_OUTPUT_TOKENS
from acp_server.models.window import DEFAULT_WINDOW, ContextWindow, context_window_of

__all__ = [
    "BYTES_PER_TOKEN",
    "IMAGE_TOKENS",
    "ITEM_OVERHEAD",
    "ContextBudget",
    "estimate_items",
    "estimate_request",
]

BYTES_PER_TOKEN = 3
"""UTF-8 bytes per token, rounded down: English prose is ~4 bytes a token, code and JSON ~3,
so dividing by 3 over-counts rather than under-counts."""
IMAGE_TOKENS = 2_000
"""Per image, whatever its size (base64 bytes say nothing about image tokens); above what
the hosted APIs charge for an image they accept at full size."""
ITEM_OVERHEAD = 8
"""Per message: role markers and separators of the chat template."""


def _text_tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)  # ceiling division


def _item_tokens(item: ConversationItem) -> int:
    if isinstance(item, AssistantMessage):
        calls = sum(
            _text_tokens(call.name) + len(msgspec.json.encode(call.arguments)) // BYTES_PER_TOKEN
            for call in item.tool_calls
        )
        return (
            ITEM_OVERHEAD + _text_tokens(item.text) + calls + ITEM_OVERHEAD * len(item.tool_calls)
        )
    if isinstance(item, ToolResultMessage):
        return ITEM_OVERHEAD + _text_tokens(item.output) + IMAGE_TOKENS * len(item.images)
    return ITEM_OVERHEAD + sum(
        IMAGE_TOKENS if isinstance(part, ImagePart) else _text_tokens(part.text)
        for part in item.parts
    )


def estimate_items(items: Sequence[ConversationItem]) -> int:
    """The guessed tokens of some conversation items."""
    return sum(_item_tokens(item) for item in items)


def _tools_tokens(tools: Sequence[ToolSpec]) -> int:
    if not tools:
        return 0
    return -(-len(msgspec.json.encode(list(tools))) // BYTES_PER_TOKEN)


def estimate_request(request: ModelRequest) -> int:
    """The guessed tokens of a whole request: system prompt, tools and messages."""
    return (
        ITEM_OVERHEAD
        + _text_tokens(request.system_prompt)
        + _tools_tokens(request.tools)
        + estimate_items(request.messages)
        + _text_tokens(request.status or "")
    )


@dataclass(frozen=True, slots=True)
class _Reported:
    """What the provider counted for one request, and how to recognise its extensions."""

    model: str
    prompt_tokens: int
    messages: int
    last: ConversationItem | None
    system_prompt: str
    tools_tokens: int
    status: str | None


class ContextBudget:
    """One session's context budget (see the module docstring).

    Until `resolve` is first awaited the window is the generic default; the loop resolves it
    before each request, so a model switch takes effect at the next request.
    """

    def __init__(self, threshold: float = DEFAULT_THRESHOLD) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"the compaction threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self.context_window = ContextWindow(DEFAULT_WINDOW, "default", "not resolved yet")
        self._model = ""
        self._reported: _Reported | None = None

    @property
    def window(self) -> int:
        """The model's context size in tokens."""
        return self.context_window.tokens

    @property
    def limit(self) -> int:
        """`threshold` of the window: requests estimated above it should be compacted."""
        return int(self.window * self.threshold)

    async def resolve(self, model: object, signal: TurnSignal) -> ContextWindow:
        """Look up the window of `model` (the provider about to be asked). Raises TurnAborted
        when the signal aborts during a first discovery; never fails otherwise."""
        self.context_window = await context_window_of(model, signal)
        self._model = str(getattr(model, "name", ""))
        return self.context_window

    def estimate(self, request: ModelRequest) -> int:
        """The tokens `request` will cost, by the rule of the module docstring."""
        reported = self._reported
        messages = request.messages
        if (
            reported is None
            or reported.model != self._model
            or len(messages) < reported.messages
            or (reported.messages and messages[reported.messages - 1] != reported.last)
        ):
            return estimate_request(request)
        delta = (
            _text_tokens(request.system_prompt)
            - _text_tokens(reported.system_prompt)
            + _tools_tokens(request.tools)
            - reported.tools_tokens
            + estimate_items(messages[reported.messages :])
            + _text_tokens(request.status or "")
            - _text_tokens(reported.status or "")
        )
        return max(0, reported.prompt_tokens + delta)

    def output_allowance(self, request: ModelRequest, limit: int) -> int:
        """The output budget of `request`: `limit`, but never more than the window leaves
        after the request's estimate (see `acp_server.models.output`)."""
        return max(MIN_OUTPUT_TOKENS, min(limit, self.window - self.estimate(request)))

    def over_threshold(self, request: ModelRequest) -> bool:
        """Whether `request` should be compacted before it is sent."""
        return self.estimate(request) > self.limit

    def record_usage(self, request: ModelRequest, usage: Usage) -> None:
        """Remember what the provider counted for `request` (its `input_tokens`, cached
        tokens included); later estimates start from it."""
        if usage.input_tokens <= 0:
            return  # a server that reports nothing useful: keep guessing
        self._reported = _Reported(
            model=self._model,
            prompt_tokens=usage.input_tokens,
            messages=len(request.messages),
            last=request.messages[-1] if request.messages else None,
            system_prompt=request.system_prompt,
            status=request.status,
            tools_tokens=_tools_tokens(request.tools),
        )

    def forget_usage(self) -> None:
        """Drop the last report (after the history was rewritten, e.g. by a compaction); the
        next estimate guesses the whole request until the provider reports again."""
        self._reported = None
