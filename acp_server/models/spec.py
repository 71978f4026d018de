"""`--model SPEC` -> a provider: `script:PATH`, `echo`, or `NAME:MODEL` for each provider of the
registry (`acp_server.models.providers`: `openai:MODEL`, `anthropic:MODEL`).

The network providers are built here without importing httpx (it is imported by their first
request). Their endpoint and key come from the environment and the config file's
`[providers.NAME]` table: the row's base URL variable (`OPENAI_BASE_URL`, ...) > `base_url` in
the file > the public endpoint; the key from the variable named by `api_key_env` (default: the
row's, `OPENAI_API_KEY`, ...), unless the file holds the key itself (`api_key`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from acp_server.models.base import ModelConfigError, ModelProvider
from acp_server.models.providers import PROVIDERS, ProviderSettings, ProviderTables
from acp_server.models.script import echo_provider, load_script

if TYPE_CHECKING:
    from acp_server.models.http import HttpOptions

__all__ = ["check_spec", "load_model"]


def check_spec(spec: str) -> str | None:
    """Why `spec` is not a model spec, or None when it has a valid form.

    Only the form is checked (`echo`, `script:PATH`, `NAME:MODEL` of a registered provider);
    nothing is read or contacted.
    """
    if spec == "echo":
        return None
    prefix, colon, rest = spec.partition(":")
    if not colon or (prefix != "script" and prefix not in PROVIDERS):
        named = ", ".join(f"{name}:MODEL" for name in PROVIDERS)
        named = " or ".join(named.rsplit(", ", 1))
        return f"unknown model spec {spec!r}; expected script:PATH, echo, {named}"
    if not rest:
        if prefix == "script":
            return f"model spec {spec!r} needs a path: script:PATH"
        return f"model spec {spec!r} needs a model name: {prefix}:MODEL"
    return None


def load_model(
    spec: str,
    providers: ProviderTables | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> ModelProvider:
    """Build the provider named by `spec`, reading any script file now.

    `providers` (the config file's `[providers.NAME]` tables) supplies the base URLs, key
    variables and timeouts; `environ` defaults to `os.environ`. Nothing is contacted here: a
    missing or bad API key shows up as a ModelError on the first request.

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
    tables = providers if providers is not None else ProviderTables()
    row = PROVIDERS[prefix]
    provider = tables.provider(prefix)
    path = tables.path
    where = f"base_url in [providers.{prefix}] of {path}" if path else f"[providers.{prefix}]"
    base_url, base_url_env = _base_url(env, row.base_url_variable, provider, where)
    if provider.api_key:
        # Named in messages as the place to fix a rejected key.
        key_env = f"api_key in [providers.{prefix}]" + (f" of {path}" if path else "")
        api_key: str | None = provider.api_key
    else:
        key_env = provider.api_key_env or row.key_variable
        api_key = env.get(key_env)
    provider_class = cast(
        "Callable[..., ModelProvider]",
        getattr(importlib.import_module(row.module), row.class_name),
    )
    endpoint = {} if base_url is None else {"base_url": base_url}
    return provider_class(
        rest,
        **endpoint,
        api_key=api_key,
        key_env=key_env,
        base_url_env=base_url_env,
        options=_options(provider, rest),
        text_tool_calls=provider.model(rest).text_tool_calls,
    )


def _base_url(
    env: Mapping[str, str], var: str, provider: ProviderSettings, where: str
) -> tuple[str | None, str]:
    """The base URL (None: the provider's public endpoint) and what to change to fix it."""
    from_env = env.get(var)
    if from_env:
        return from_env, var
    if provider.base_url:
        return provider.base_url, where
    return None, var


def _options(provider: ProviderSettings, model: str) -> HttpOptions:
    # Here, not at the top: the CLI checks and loads `echo` and `script:` models before
    # `session/new` is answered; a network provider's class imports this module anyway.
    from acp_server.models.http import HttpOptions

    options = HttpOptions()
    if provider.connect_timeout is not None:
        options = replace(options, connect_timeout=provider.connect_timeout)
    if provider.read_timeout is not None:
        options = replace(options, read_timeout=provider.read_timeout)
    settings = provider.model(model)
    return replace(
        options,
        context_window=settings.context_window,
        max_output_tokens=settings.max_output_tokens,
        images=settings.images,
        temperature=settings.temperature,
        edit_format=settings.edit_format,
        auto_test=settings.auto_test,
    )
