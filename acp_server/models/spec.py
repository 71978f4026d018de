"""`--model SPEC` -> a provider: `script:PATH`, `echo`, `openai:MODEL`, `anthropic:MODEL`.

The network providers are built here without importing httpx (it is imported by their first
request). Their endpoint and key come from the environment and the config file's
`[providers.NAME]` table (see `acp_server.models.config`): `OPENAI_BASE_URL` /
`ANTHROPIC_BASE_URL` > `base_url` in the file > the public endpoint; the key from the variable
named by `api_key_env` (default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`), unless the file holds
the key itself (`api_key`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from acp_server.models.base import ModelConfigError, ModelProvider
from acp_server.models.config import ModelSettings, ProviderSettings, check_spec
from acp_server.models.http import HttpOptions
from acp_server.models.script import echo_provider, load_script

if TYPE_CHECKING:
    from acp_server.models.anthropic import AnthropicProvider


def load_model(
    spec: str,
    settings: ModelSettings | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> ModelProvider:
    """Build the provider named by `spec`, reading any script file now.

    `settings` (from `load_settings`) supplies the providers' base URLs, key variables and
    timeouts; `environ` defaults to `os.environ`. Nothing is contacted here: a missing or bad
    API key shows up as a ModelError on the first request.

    Raises ModelConfigError with a message fit for the command line.
    """
    problem = check_spec(spec)
    if problem is not None:
        raise ModelConfigError(problem)
    if spec == "echo":
        return echo_provider()
    prefix, _, rest = spec.partition(":")
    if prefix == "script":
        return load_script(rest)
    env = os.environ if environ is None else environ
    provider = settings.provider(prefix) if settings is not None else ProviderSettings()
    where = _table(settings, prefix)
    if prefix == "openai":
        from acp_server.models.openai import DEFAULT_BASE_URL, OpenAIProvider

        provider_class: type[OpenAIProvider] | type[AnthropicProvider] = OpenAIProvider
    else:
        from acp_server.models.anthropic import DEFAULT_BASE_URL, AnthropicProvider

        provider_class = AnthropicProvider
    upper = prefix.upper()
    base_url, base_url_env = _base_url(env, f"{upper}_BASE_URL", provider, where, DEFAULT_BASE_URL)
    if provider.api_key:
        # Named in messages as the place to fix a rejected key.
        path = settings.path if settings is not None else None
        key_env = f"api_key in [providers.{prefix}]" + (f" of {path}" if path else "")
        api_key: str | None = provider.api_key
    else:
        key_env = provider.api_key_env or f"{upper}_API_KEY"
        api_key = env.get(key_env)
    return provider_class(
        rest,
        base_url=base_url,
        api_key=api_key,
        key_env=key_env,
        base_url_env=base_url_env,
        options=_options(provider, rest),
        text_tool_calls=provider.text_calls_for(rest),
    )


def _table(settings: ModelSettings | None, prefix: str) -> str:
    path = settings.path if settings is not None else None
    return f"base_url in [providers.{prefix}] of {path}" if path else f"[providers.{prefix}]"


def _base_url(
    env: Mapping[str, str], var: str, provider: ProviderSettings, where: str, default: str
) -> tuple[str, str]:
    """The base URL and what to change to fix it (for error messages)."""
    from_env = env.get(var)
    if from_env:
        return from_env, var
    if provider.base_url:
        return provider.base_url, where
    return default, var


def _options(provider: ProviderSettings, model: str) -> HttpOptions:
    options = HttpOptions()
    if provider.connect_timeout is not None:
        options = replace(options, connect_timeout=provider.connect_timeout)
    if provider.read_timeout is not None:
        options = replace(options, read_timeout=provider.read_timeout)
    window = provider.window_for(model)
    if window is not None:
        options = replace(options, context_window=window)
    output = provider.output_for(model)
    if output is not None:
        options = replace(options, max_output_tokens=output)
    images = provider.images_for(model)
    if images is not None:
        options = replace(options, images=images)
    return options
