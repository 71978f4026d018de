"""The output budget: how many tokens one model request may generate.

Every request the agent sends carries a limit (`ModelRequest.max_output_tokens`; OpenAI-
compatible servers get it as `max_tokens`, the OpenAI API as `max_completion_tokens`, Anthropic
as `max_tokens`). Without one, llama.cpp generates until the context is full: on a small CPU a
single request then runs for many minutes while the client sees nothing.

The limit is the configured one (`max_output_tokens` in `[providers.NAME]` or
`[providers.NAME.models."MODEL"]`), else `DEFAULT_OUTPUT_TOKENS`; it never exceeds what the
context window leaves after the request (`ContextBudget.output_allowance`). A response that
reaches it ends with `max_tokens`, like any other.

The compaction threshold (`DEFAULT_THRESHOLD`, applied by `models/budget.py`) is the other
half of the room kept for the answer; it is here, in a module that imports nothing, so that
the config file's reader (`agent/settings.py`) names it without loading the budget.
"""

from __future__ import annotations

__all__ = ["DEFAULT_OUTPUT_TOKENS", "DEFAULT_THRESHOLD", "MIN_OUTPUT_TOKENS", "output_limit_of"]

DEFAULT_OUTPUT_TOKENS = 8192
"""Enough for an agentic step (an explanation and a tool call writing a whole file of a few
hundred lines); a longer file is better written in edits than in one generation."""
DEFAULT_THRESHOLD = 0.8
"""The fraction of the context window above which a request is compacted before it is sent:
the rest is room for the answer and for the estimate's error."""
MIN_OUTPUT_TOKENS = 1
"""The allowance never goes below this: a request the window cannot hold is sent anyway and
the server's refusal names the sizes (compaction runs first, so this is rare)."""


def output_limit_of(model: object) -> int:
    """The configured output limit of `model` (its `max_output_tokens` attribute when it has
    one), else the default."""
    limit = getattr(model, "max_output_tokens", None)
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        return limit
    return DEFAULT_OUTPUT_TOKENS
