"""The context window: configured, discovered from a real local HTTP server answering llama.cpp's
`/props` and vLLM's `/v1/models`, or the default; lazily, once per provider, bounded in time,
under the turn signal, and never failing the session."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.config import load_config
from acp_server.models import window as window_module
from acp_server.models.anthropic import AnthropicProvider
from acp_server.models.openai import DEFAULT_BASE_URL, OpenAIProvider
from acp_server.models.providers import PROVIDERS
from acp_server.models.script import echo_provider
from acp_server.models.spec import load_model
from acp_server.models.switchable import SwitchableModel
from acp_server.models.window import ContextWindow, context_window_of
from tests.support.http_routes import Route, serve_routes
from tests.support.providers import FAST, close_all, track

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    yield
    await close_all()


def openai(url: str, model: str = "qwen") -> OpenAIProvider:
    return track(OpenAIProvider(model, base_url=url + "/v1", options=FAST))


async def window(provider: Any) -> ContextWindow:
    return await context_window_of(provider, TurnCancellation().signal)


LLAMA_PROPS = {
    "default_generation_settings": {"n_ctx": 4096, "temperature": 0.8},
    "total_slots": 1,
    "model_path": "model.gguf",
}


async def test_llamacpp_props_n_ctx_is_used_after_models_says_nothing() -> None:
    routes = {
        "/v1/models": Route(
            {"object": "list", "data": [{"id": "qwen", "meta": {"n_ctx_train": 32768}}]}
        ),
        "/props": Route(LLAMA_PROPS),
    }
    with serve_routes(routes) as server:
        provider = openai(server.url)
        found = await window(provider)
        again = await window(provider)
    assert found == ContextWindow(4096, "server", "llama.cpp /props n_ctx")
    assert again == found
    assert server.seen == ["/v1/models", "/props"]  # asked once, kept


async def test_props_top_level_and_slot_n_ctx_give_the_smaller() -> None:
    props = {"n_ctx": 16384, "default_generation_settings": {"n_ctx": 4096}}
    with serve_routes({"/props": Route(props)}) as server:
        assert (await window(openai(server.url))).tokens == 4096
    with serve_routes({"/props": Route({"n_ctx": 8192})}) as server:
        assert (await window(openai(server.url))).tokens == 8192


async def test_vllm_max_model_len_of_the_models_entry() -> None:
    models = {
        "object": "list",
        "data": [
            {"id": "other", "max_model_len": 1000},
            {"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 32768},
        ],
    }
    with serve_routes({"/v1/models": Route(models)}) as server:
        found = await window(openai(server.url, "Qwen/Qwen2.5-7B"))
    assert found == ContextWindow(32768, "server", "the model list")
    assert server.seen == ["/v1/models"]


async def test_context_length_of_the_only_entry() -> None:
    models = {"data": [{"id": "served-under-another-name", "context_length": 131072}]}
    with serve_routes({"/v1/models": Route(models)}) as server:
        assert (await window(openai(server.url))).tokens == 131072


@pytest.mark.parametrize(
    "body",
    [
        {"n_ctx": -1},
        {"n_ctx": True},
        {"n_ctx": "4096"},
        {"n_ctx": 10**12},
        {"default_generation_settings": "x"},
        [1, 2],
    ],
)
async def test_implausible_answers_mean_the_default(body: Any) -> None:
    with serve_routes({"/props": Route(body)}) as server:
        found = await window(openai(server.url))
    assert found.source == "default"
    compatible = PROVIDERS["openai"].compatible
    assert compatible is not None and found.tokens == compatible.window == 32_768


async def test_broken_bodies_and_errors_mean_the_default() -> None:
    routes = {"/v1/models": Route(raw=b"{not json"), "/props": Route({"error": "x"}, status=500)}
    with serve_routes(routes) as server:
        found = await window(openai(server.url))
    assert found.source == "default" and server.seen == ["/v1/models", "/props"]


async def test_a_hanging_server_costs_one_bounded_wait_then_the_default_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(window_module, "DISCOVERY_TIMEOUT_S", 0.3)
    with serve_routes({"/v1/models": Route(hang=True)}) as server:
        provider = openai(server.url)
        first = await window(provider)
        second = await window(provider)
    assert first.source == "default" and second == first
    assert server.seen == ["/v1/models"]  # the second request did not ask again


async def test_no_server_at_all_means_the_default() -> None:
    with serve_routes({}) as server:
        url = server.url
    found = await window(openai(url))  # nothing listens there any more
    assert found.source == "default"


async def test_a_cancel_during_discovery_raises_and_is_not_remembered() -> None:
    with serve_routes({"/v1/models": Route(hang=True), "/props": Route(LLAMA_PROPS)}) as server:
        provider = openai(server.url)
        cancellation = TurnCancellation()
        outcome: list[str] = []

        async def discover() -> None:
            try:
                await context_window_of(provider, cancellation.signal)
            except TurnAborted:
                outcome.append("aborted")

        async with anyio.create_task_group() as tg:
            tg.start_soon(discover)
            await anyio.to_thread.run_sync(server.arrived.wait)  # the probe is on the hang
            cancellation.abort(UserCancel())
        assert outcome == ["aborted"]
        server.routes["/v1/models"] = Route({"data": []})
        found = await window(provider)  # a fresh turn asks again
    assert found.tokens == 4096


async def test_a_configured_window_is_never_probed(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[providers.openai]\ncontext_window = 65536\n\n"
        '[providers.openai.models."small-model"]\ncontext_window = 2048\n'
    )
    settings = load_config(config)
    with serve_routes({"/props": Route(LLAMA_PROPS)}) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1"}
        big = track(load_model("openai:big-model", settings.providers, environ=env))
        small = track(load_model("openai:small-model", settings.providers, environ=env))
        assert await window(big) == ContextWindow(
            65536, "config", "context_window in the config file"
        )
        assert (await window(small)).tokens == 2048
    assert server.seen == []


async def test_public_openai_and_anthropic_use_their_defaults_without_asking() -> None:
    public = track(OpenAIProvider("gpt-4o", base_url=DEFAULT_BASE_URL, options=FAST))
    assert (await window(public)).tokens == 128_000
    claude = track(AnthropicProvider("claude-x", api_key="k", options=FAST))
    assert await window(claude) == ContextWindow(200_000, "default", "default for Anthropic models")


async def test_the_scripted_model_and_a_switchable_model() -> None:
    echo = echo_provider()
    assert (await window(echo)).tokens == 100_000
    with serve_routes({"/props": Route(LLAMA_PROPS)}) as server:
        remote = openai(server.url)
        switchable = SwitchableModel("echo", echo, lambda spec: remote)
        assert (await window(switchable)).tokens == 100_000
        switchable.switch("openai:qwen")
        assert (await window(switchable)).tokens == 4096


async def test_a_provider_without_the_method_gets_the_generic_default() -> None:
    class Bare:
        name = "bare"

    assert (await window(Bare())).source == "default"
