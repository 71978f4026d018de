"""A session's model, switchable between requests (the `model` config option)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

from acp_server.cancellation import TurnSignal

from .base import ModelConfigError, ModelEvent, ModelProvider, ModelRequest, subagent_provider
from .output import output_limit_of
from .window import ContextWindow, context_window_of


class SwitchableModel:
    """Delegates each request to the provider chosen last; a switch applies from the next
    request, never to one in flight (a stream keeps the provider it started with)."""

    def __init__(self, spec: str, provider: ModelProvider, load: Callable[[str], ModelProvider]):
        self.spec = spec
        self.name = provider.name
        self._provider = provider
        self._load = load
        self._loaded: dict[str, ModelProvider] = {spec: provider}

    def switch(self, spec: str) -> None:
        """Use `spec` from the next request on; `ModelConfigError` if it cannot be loaded."""
        provider = self._loaded.get(spec)
        if provider is None:
            provider = self._load(spec)
            self._loaded[spec] = provider
        self._provider = provider
        self.spec = spec
        self.name = provider.name

    def for_subagent(self) -> ModelProvider:
        """The subagent variant of the provider chosen now (a child keeps it for its life)."""
        return subagent_provider(self._provider)

    @property
    def max_output_tokens(self) -> int:
        """The output limit of the provider chosen now."""
        return output_limit_of(self._provider)

    @property
    def text_tool_calls(self) -> bool:
        """Whether the provider chosen now has text tool calls recognised."""
        return getattr(self._provider, "text_tool_calls", False) is True

    @property
    def edit_format(self) -> str | None:
        """The configured edit format of the provider chosen now (None: the default)."""
        value = getattr(self._provider, "edit_format", None)
        return value if isinstance(value, str) else None

    @property
    def auto_test(self) -> bool | None:
        """The configured `auto_test` of the provider chosen now (None: the default)."""
        value = getattr(self._provider, "auto_test", None)
        return value if isinstance(value, bool) else None

    async def context_window(self, signal: TurnSignal) -> ContextWindow:
        """The window of the provider chosen now."""
        return await context_window_of(self._provider, signal)

    def stream(self, request: ModelRequest, signal: TurnSignal) -> AsyncGenerator[ModelEvent, None]:
        return self._provider.stream(request, signal)


__all__ = ["ModelConfigError", "SwitchableModel"]
