"""What the config file says about a model: its window and output limit, how it calls tools and
edits files, how it samples, whether the agent runs the tests after its edits.

The same keys are read in `[providers.NAME]` (every model of the provider) and in
`[providers.NAME.models."MODEL"]` (that model, winning over the provider's table). None means
"not set here": the default then comes from the code that uses the key (named in each key's
description). `ProviderSettings.model(name)` gives one model's merged settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, get_args

__all__ = ["EDIT_FORMATS", "EditFormat", "ModelSettings", "model_settings"]

EditFormat = Literal["tool_calls", "whole_file", "search_replace"]
"""How a model changes files: through the `edit_file` and `write_file` tool calls, or as text
the agent parses from its answer and applies through those same tools: each changed file
listed whole, or search/replace blocks (acp_server/agent/edit_blocks.py)."""

EDIT_FORMATS: tuple[str, ...] = get_args(EditFormat)

ConfigError = Callable[[str, str | None, str | None], Exception]
"""`error(problem, key, table)`: the exception naming the config file and the line."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """The model keys of a `[providers.NAME]` or `[providers.NAME.models."MODEL"]` table."""

    context_window: int | None = None
    """Tokens the model holds (the context budget's window; `usage_update` size); unset: asked
    of the server, else a default per provider (docs/models.md)."""
    max_output_tokens: int | None = None
    """Tokens one request may generate (unset: 8192; see `acp_server.models.output`)."""
    text_tool_calls: bool | None = None
    """Run a tool call the model wrote as text (unset: on for OpenAI-compatible servers other
    than the OpenAI API; see acp_server/agent/text_calls.py)."""
    images: bool | None = None
    """The model takes images (unset: Anthropic and the OpenAI API do, another server is
    asked; see acp_server/models/images.py)."""
    edit_format: str | None = None
    """How the model changes files: `tool_calls` (the `edit_file` and `write_file` tools),
    `whole_file` (it answers with each changed file whole) or `search_replace` (with
    search/replace blocks); unset: see docs/local-model.md, "Edit formats"."""
    temperature: float | None = None
    """The sampling temperature sent with every request (0 to 2); unset: none is sent, so the
    server's default applies, except with a text edit format, which asks for 0."""
    auto_test: bool | None = None
    """After the model's edits, run the project's test command and give it the failures, for
    up to `[tests] max_rounds` rounds (unset: on with a text edit format, off with
    `tool_calls`)."""

    def over(self, base: ModelSettings) -> ModelSettings:
        """These settings, with `base`'s wherever these say nothing."""
        missing = {
            entry.name: getattr(base, entry.name)
            for entry in fields(self)
            if getattr(self, entry.name) is None
        }
        return replace(self, **missing)


_KINDS: dict[str, type] = {
    "context_window": int,
    "max_output_tokens": int,
    "text_tool_calls": bool,
    "images": bool,
    "edit_format": str,
    "temperature": float,
    "auto_test": bool,
}
MODEL_KEYS: tuple[str, ...] = tuple(_KINDS)
"""The keys a table may set about its models."""


def model_settings(entry: dict[str, Any], table: str, error: ConfigError) -> ModelSettings:
    """The model keys of one table (`entry`, already free of other keys), checked;
    `error(problem, key, table)` makes the exception naming the file and line."""
    values: dict[str, Any] = {}
    for key, value in entry.items():
        kind = _KINDS[key]
        if kind is bool:
            if not isinstance(value, bool):
                raise error(f"[{table}] `{key}` must be true or false", key, table)
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise error(f"[{table}] `{key}` must be a positive integer", key, table)
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2:
                raise error(f"[{table}] `{key}` must be a number from 0 to 2", key, table)
            value = float(value)
        elif value not in EDIT_FORMATS:
            expected = ", ".join(f'"{name}"' for name in EDIT_FORMATS)
            raise error(f"[{table}] `{key}` must be one of {expected}", key, table)
        values[key] = value
    return ModelSettings(**values)
