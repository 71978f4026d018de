"""How many tokens a model's context holds: configured, reported by the server, or a default.

The order: the config file's `context_window` (per model, else per provider; see
`acp_server.models.providers`), else what the server reports, else the default of the provider
row's server (`Server.window`: the hosted API's, or a compatible server's), or `DEFAULT_WINDOW`
for a model whose provider has no window of its own. Servers are asked only where they say so:

- the provider's models URL (`GET {base_url}/models`): the entry whose `id` is the model (or
  the only entry), its `max_model_len` (vLLM) or `context_length` (OpenRouter and others);
- `GET {root}/props` (llama.cpp's server; `root` is the base URL without `/v1`): `n_ctx` at the
  top level or under `default_generation_settings`; the smaller one when both are present,
  since the latter is one slot's share of the former.

Discovery is lazy (the first model request of a session asks, never `initialize`), runs under
the turn signal, is bounded by `DISCOVERY_TIMEOUT_S` for all probes together, and never fails
the session: no usable answer means the default. Each provider asks once and keeps the answer
(`DiscoveredWindow`), whatever it was, so a server that hangs on `/props` costs one timeout,
not one per request. The public OpenAI endpoint is never asked: its `/models` has no sizes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio
import msgspec

from acp_server.cancellation import TurnSignal

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_WINDOW",
    "DISCOVERY_TIMEOUT_S",
    "ContextWindow",
    "DiscoveredWindow",
    "context_window_of",
    "get_json",
    "window_from_models",
    "window_from_props",
]

log = logging.getLogger(__name__)

DISCOVERY_TIMEOUT_S = 2.0
"""Seconds all discovery probes of one provider may take together."""

DEFAULT_WINDOW = 32_768
"""The window of a model whose provider has none of its own (a scripted model), and of a
session's budget before its model's window is known. A network provider's default is its
registry row's (`acp_server.models.providers.Server.window`)."""

_MAX_PLAUSIBLE = 100_000_000
"""Larger reported sizes are not believed (a hostile or broken server)."""

_MAX_BODY = 8 * 1024 * 1024
"""A `/models` list of a large gateway is a few hundred KB; more is not read."""

Source = Literal["config", "server", "default"]


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A model's context size in tokens, and where that number came from."""

    tokens: int
    source: Source
    detail: str
    """For logs and messages, e.g. `llama.cpp /props n_ctx` or `[providers.openai]`."""


async def context_window_of(model: object, signal: TurnSignal) -> ContextWindow:
    """`model.context_window(signal)` when the provider has one, else the generic default.

    Raises TurnAborted when the signal aborts during discovery; never anything else.
    """
    method = getattr(model, "context_window", None)
    if callable(method):
        window: ContextWindow = await method(signal)
        return window
    return ContextWindow(DEFAULT_WINDOW, "default", "default for this provider")


def _plausible(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 < value <= _MAX_PLAUSIBLE else None


def window_from_models(body: Any, model: str) -> int | None:
    """The size in a `/models` answer: the model's entry (or the only one) `max_model_len`,
    else `context_length`."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None
    entries = [e for e in body["data"] if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model]
    if not chosen and len(entries) == 1:
        chosen = entries
    for entry in chosen:
        for key in ("max_model_len", "context_length"):
            size = _plausible(entry.get(key))
            if size is not None:
                return size
    return None


def window_from_props(body: Any) -> int | None:
    """The size in a llama.cpp `/props` answer (see the module docstring)."""
    if not isinstance(body, dict):
        return None
    sizes = [_plausible(body.get("n_ctx"))]
    settings = body.get("default_generation_settings")
    if isinstance(settings, dict):
        sizes.append(_plausible(settings.get("n_ctx")))
    found = [size for size in sizes if size is not None]
    return min(found) if found else None


class DiscoveredWindow:
    """One OpenAI-compatible provider's window: asked of the server once, then kept."""

    __slots__ = ("_default", "_found", "_label")

    def __init__(self, label: str, configured: ContextWindow | None, default: ContextWindow):
        self._label = label
        self._default = default
        self._found: ContextWindow | None = configured  # a configured size is never probed

    async def get(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        models_url: str,
        model: str,
        headers: Mapping[str, str],
        signal: TurnSignal,
    ) -> ContextWindow:
        """The window, probing the server the first time (see the module docstring)."""
        if self._found is not None:
            return self._found
        found: ContextWindow | None = None
        with signal.linked_scope(), anyio.move_on_after(DISCOVERY_TIMEOUT_S):
            size = window_from_models(await get_json(client, models_url, headers), model)
            if size is not None:
                found = ContextWindow(size, "server", "the model list")
            else:
                root = base_url.removesuffix("/v1")
                size = window_from_props(await get_json(client, f"{root}/props", headers))
                if size is not None:
                    found = ContextWindow(size, "server", "llama.cpp /props n_ctx")
        signal.raise_if_aborted()  # an aborted probe says nothing: ask again next time
        if found is None:
            found = self._default
        log.info("%s: context window %d tokens (%s)", self._label, found.tokens, found.detail)
        self._found = found
        return found


async def get_json(client: httpx.AsyncClient, url: str, headers: Mapping[str, str]) -> Any:
    """The decoded JSON of a 200 answer to `GET url`, else None (any failure at all, or a body
    over `_MAX_BODY` bytes)."""
    import httpx

    body = bytearray()
    try:
        async with client.stream("GET", url, headers=dict(headers)) as response:
            if response.status_code != 200:
                return None
            async for piece in response.aiter_bytes():
                body += piece
                if len(body) > _MAX_BODY:
                    return None
    except (httpx.HTTPError, ValueError):
        return None
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
