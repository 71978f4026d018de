"""The provider registry: one row per network provider, and its `[providers.NAME]` table.

A row holds every fact about a provider that more than its own class needs:

- the spec prefix and table name (`openai`), the variable its key is read from by default, the
  variable that overrides its endpoint, and the class (imported when a model of that provider is
  first built, so no HTTP stack loads before it is needed);
- the servers it talks to (`Server`): its hosted API, and the compatible servers that speak the
  same API where there are (a local llama.cpp): each with the label and address setup offers,
  whether it needs a key, and the context window its models get when nobody says;
- how a request is authorised (`auth_headers`) and where the models are listed (`models_url`).

Everything that must agree about providers reads `PROVIDERS`: the config file's table names
(`provider_tables`), the model spec's prefixes (`acp_server.models.spec`), the provider classes
(their public endpoint, headers and default windows), `acp-server setup`'s first question and
its model list (`acp_server.firstrun`), the key variables that are redacted and scrubbed from
children (`ProviderTables.key_variables`, `default_key_variables`), the base URL variables whose
userinfo is a key (`url_credentials`), and the no-model message. A new provider is its module and
one row (docs/architecture.md, "Add a provider"); `tests/test_provider_facts.py` fails when a
row's fact is written anywhere else.

The table's values (`ProviderSettings`) live here too: `load_model` is their only reader.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = [
    "PROVIDERS",
    "Provider",
    "ProviderSettings",
    "ProviderTables",
    "Server",
    "default_key_variables",
    "provider_tables",
    "url_credentials",
]

ConfigError = Callable[[str, str | None, str | None], Exception]
"""`error(problem, key, table)`: the exception naming the config file and the line."""


@dataclass(frozen=True, slots=True)
class Server:
    """A kind of server a provider's models run on: its hosted API, or a compatible server."""

    label: str
    """How setup's first question names it."""
    base_url: str
    """The hosted API's public endpoint (the provider class's default), or the address setup
    suggests for a compatible server."""
    key_needed: bool
    """Whether requests need a key (setup offers "no key" only where they do not)."""
    window: int
    """Tokens a model holds when neither the config file nor the server says."""
    hint: str = ""
    """Shown beside setup's URL question: another usual address."""


@dataclass(frozen=True, slots=True)
class Provider:
    """One network provider: `NAME:MODEL` specs, the `[providers.NAME]` table, its servers."""

    name: str
    key_variable: str
    """Where the key is read from unless the table names another (`api_key_env`)."""
    base_url_variable: str
    """Overrides the table's `base_url` and the provider's public endpoint."""
    module: str
    class_name: str
    """The provider class in `module`: `Class(model, *, base_url, api_key, key_env,
    base_url_env, options, text_tool_calls)`; its `base_url` default is `hosted.base_url`."""
    hosted: Server
    """The provider's own API."""
    compatible: Server | None = None
    """The other servers that speak this API, if any: then every base URL but the hosted one
    is such a server. None: every base URL is the provider's own API (behind a proxy)."""
    models_path: str = "/models"
    """Appended to the base URL: where `GET` lists the models."""
    key_header: str = "authorization"
    key_scheme: str = "Bearer "
    """The key is sent as `key_header: key_scheme + key`."""
    fixed_headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Sent with every request, key or not (an API version)."""

    def auth_headers(self, key: str | None) -> dict[str, str]:
        """The headers that authorise a request with `key` (none for the key when it is
        None or empty: a local server that needs none)."""
        headers = {self.key_header: self.key_scheme + key} if key else {}
        return headers | dict(self.fixed_headers)

    def models_url(self, base_url: str) -> str:
        """Where the server at `base_url` lists its models."""
        return base_url.rstrip("/") + self.models_path

    def server_at(self, base_url: str) -> Server:
        """The kind of server at `base_url`: the hosted API, or a compatible server."""
        if self.compatible is None or base_url.rstrip("/") == self.hosted.base_url:
            return self.hosted
        return self.compatible

    def servers(self) -> tuple[Server, ...]:
        """The hosted API, then the compatible servers."""
        return (self.hosted,) if self.compatible is None else (self.hosted, self.compatible)


PROVIDERS: Mapping[str, Provider] = {
    row.name: row
    for row in (
        Provider(
            "openai",
            key_variable="OPENAI_API_KEY",
            base_url_variable="OPENAI_BASE_URL",
            module="acp_server.models.openai",
            class_name="OpenAIProvider",
            # The public models hold at least 128,000 tokens.
            hosted=Server("OpenAI", "https://api.openai.com/v1", key_needed=True, window=128_000),
            # A server that does not report its size (Ollama, LM Studio, a proxy) gets a size
            # common for local models that compaction can live with either way: a larger real
            # window only means compacting early, a smaller one is caught by the server's
            # context error.
            compatible=Server(
                "An OpenAI-compatible server (llama.cpp, vLLM, Ollama, ...)",
                "http://127.0.0.1:8080/v1",
                key_needed=False,
                window=32_768,
                hint="Ollama: http://127.0.0.1:11434/v1",
            ),
        ),
        Provider(
            "anthropic",
            key_variable="ANTHROPIC_API_KEY",
            base_url_variable="ANTHROPIC_BASE_URL",
            module="acp_server.models.anthropic",
            class_name="AnthropicProvider",
            # Every current Claude model holds 200,000 tokens.
            hosted=Server(
                "Anthropic", "https://api.anthropic.com", key_needed=True, window=200_000
            ),
            models_path="/v1/models",
            key_header="x-api-key",
            key_scheme="",
            fixed_headers=MappingProxyType({"anthropic-version": "2023-06-01"}),
        ),
    )
}
"""The registry, by name (the order is the one messages list them in)."""


def default_key_variables() -> tuple[str, ...]:
    """Each provider's default key variable (`OPENAI_API_KEY`, ...)."""
    return tuple(row.key_variable for row in PROVIDERS.values())


def url_credentials(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The base URL variables that carry credentials (`https://user:password@host`), each
    with its userinfo: such a URL is a key, and is treated like one."""
    found: dict[str, str] = {}
    for row in PROVIDERS.values():
        name = row.base_url_variable
        value = environ.get(name, "")
        scheme, separator, rest = value.partition("://")
        userinfo, at, _ = rest.split("/", 1)[0].rpartition("@")
        if scheme and separator and at and userinfo:
            found[name] = userinfo
    return found


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """One `[providers.NAME]` table; None means "not set here"."""

    base_url: str | None = None
    """The endpoint (`http://127.0.0.1:8080/v1` for a local server); the provider's base URL
    variable wins over it, and without either the public endpoint is used."""
    api_key_env: str | None = None
    """The environment variable the key is read from (default: the provider's,
    `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`); not with `api_key`."""
    api_key: str | None = field(default=None, repr=False)
    """The key itself, when the file holds it (what `acp-server setup` writes for a typed key;
    never shown: `repr` leaves it out); it wins over the variables; not with `api_key_env`."""
    connect_timeout: float | None = None
    """Seconds to connect to the server (unset: 10)."""
    read_timeout: float | None = None
    """Seconds to wait between chunks of a response (unset: 60)."""
    context_window: int | None = None
    """Tokens the provider's models hold (the context budget's window; `usage_update` size);
    unset: asked of the server, else a default per provider (docs/models.md)."""
    model_windows: dict[str, int] = field(
        default_factory=dict, metadata={"config_key": 'models."MODEL".context_window'}
    )
    """`context_window` of one model (`[providers.NAME.models."MODEL"]`), by model name: wins
    over the provider's."""
    max_output_tokens: int | None = None
    """Tokens one request may generate (unset: 8192; see `acp_server.models.output`)."""
    model_outputs: dict[str, int] = field(
        default_factory=dict, metadata={"config_key": 'models."MODEL".max_output_tokens'}
    )
    """`max_output_tokens` of one model, by model name: wins over the provider's."""
    text_tool_calls: bool | None = None
    """Run a tool call the model wrote as text (unset: on for OpenAI-compatible servers other
    than the OpenAI API; see acp_server/agent/text_calls.py)."""
    model_text_calls: dict[str, bool] = field(
        default_factory=dict, metadata={"config_key": 'models."MODEL".text_tool_calls'}
    )
    """`text_tool_calls` of one model, by model name: wins over the provider's."""
    images: bool | None = None
    """The provider's models take images (unset: Anthropic and the OpenAI API do, another
    server is asked; see acp_server/models/images.py)."""
    model_images: dict[str, bool] = field(
        default_factory=dict, metadata={"config_key": 'models."MODEL".images'}
    )
    """`images` of one model, by model name: wins over the provider's."""

    def window_for(self, model: str) -> int | None:
        """The configured window of `model`: its own, else the provider's, else None."""
        return self.model_windows.get(model, self.context_window)

    def text_calls_for(self, model: str) -> bool | None:
        """The configured `text_tool_calls` of `model`: its own, else the provider's, else
        None (the provider's default)."""
        return self.model_text_calls.get(model, self.text_tool_calls)

    def images_for(self, model: str) -> bool | None:
        """The configured `images` of `model`: its own, else the provider's, else None."""
        return self.model_images.get(model, self.images)

    def output_for(self, model: str) -> int | None:
        """The configured output limit of `model`: its own, else the provider's, else None."""
        return self.model_outputs.get(model, self.max_output_tokens)


@dataclass(frozen=True, slots=True)
class ProviderTables:
    """Every `[providers.NAME]` table of the config file, and the file (for messages)."""

    tables: dict[str, ProviderSettings] = field(default_factory=dict)
    path: Path | None = None
    """The file the tables came from; None when no file was read."""

    def provider(self, name: str) -> ProviderSettings:
        """The settings of provider `name` (empty when the file has no table for it)."""
        return self.tables.get(name) or ProviderSettings()

    def key_variables(self) -> frozenset[str]:
        """Every environment variable a provider key may come from: each row's default and
        each `api_key_env` of the file."""
        named = (p.api_key_env for p in self.tables.values() if p.api_key_env)
        return frozenset((*default_key_variables(), *named))

    def file_keys(self) -> list[str]:
        """The keys the file holds itself (`api_key`), to be redacted wherever they might be
        quoted."""
        return [p.api_key for p in self.tables.values() if p.api_key]


_KEYS = {
    "base_url": str,
    "api_key_env": str,
    "api_key": str,
    "connect_timeout": float,
    "read_timeout": float,
    "context_window": int,
    "max_output_tokens": int,
    "text_tool_calls": bool,
    "images": bool,
}


def provider_tables(entry: Any, error: ConfigError, path: Path | None) -> ProviderTables:
    """The config file's `providers` value; `error(problem, key, table)` makes the exception
    that names the file and line."""
    if not isinstance(entry, dict):
        raise error("`providers` must be a table of [providers.NAME]", "providers", None)
    return ProviderTables({name: _table(name, value, error) for name, value in entry.items()}, path)


def _positive_int(value: Any, key: str, table: str, error: ConfigError) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise error(f"[{table}] `{key}` must be a positive integer", key, table)
    return value


def _table(name: str, entry: Any, error: ConfigError) -> ProviderSettings:
    table = f"providers.{name}"
    if name not in PROVIDERS:
        raise error(f"unknown provider [{table}]; expected {' or '.join(PROVIDERS)}", "", table)
    if not isinstance(entry, dict):
        raise error(f"[{table}] must be a table", name, "providers")
    values: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "models":
            (
                values["model_windows"],
                values["model_outputs"],
                values["model_text_calls"],
                values["model_images"],
            ) = _model_tables(table, value, error)
            continue
        kind = _KEYS.get(key)
        if kind is None:
            raise error(
                f"unknown key `{key}` in [{table}]; expected "
                f'{", ".join(_KEYS)} or [{table}.models."MODEL"]',
                key,
                table,
            )
        if kind is bool:
            if not isinstance(value, bool):
                raise error(f"[{table}] `{key}` must be true or false", key, table)
        elif kind is str:
            if not isinstance(value, str) or not value:
                raise error(f"[{table}] `{key}` must be a non-empty string", key, table)
        elif kind is int:
            _positive_int(value, key, table, error)
        elif isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise error(f"[{table}] `{key}` must be a positive number of seconds", key, table)
        else:
            value = float(value)
        values[key] = value
    if "api_key" in values and "api_key_env" in values:
        raise error(f"[{table}] sets both `api_key` and `api_key_env`; keep one", "api_key", table)
    return ProviderSettings(**values)


def _model_tables(
    table: str, value: Any, error: ConfigError
) -> tuple[dict[str, int], dict[str, int], dict[str, bool], dict[str, bool]]:
    """`[providers.NAME.models."MODEL"]` tables: each may set `context_window`,
    `max_output_tokens`, `text_tool_calls` and `images`; returns each by model name."""
    if not isinstance(value, dict):
        raise error(f'[{table}] `models` must be tables [{table}.models."MODEL"]', None, None)
    windows: dict[str, int] = {}
    outputs: dict[str, int] = {}
    text_calls: dict[str, bool] = {}
    images: dict[str, bool] = {}
    for model, entry in value.items():
        inner = f"{table}.models.{model}"
        if not isinstance(entry, dict):
            raise error(f'[{table}.models."{model}"] must be a table', model, None)
        for key, setting in entry.items():
            if key == "context_window":
                windows[model] = _positive_int(setting, key, inner, error)
            elif key == "max_output_tokens":
                outputs[model] = _positive_int(setting, key, inner, error)
            elif key in ("text_tool_calls", "images"):
                if not isinstance(setting, bool):
                    raise error(f"[{inner}] `{key}` must be true or false", key, inner)
                (text_calls if key == "text_tool_calls" else images)[model] = setting
            else:
                raise error(
                    f'unknown key `{key}` in [{table}.models."{model}"]; expected '
                    "context_window, max_output_tokens, text_tool_calls or images",
                    key,
                    inner,
                )
    return windows, outputs, text_calls, images
