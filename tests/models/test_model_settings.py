"""The model settings carry the sampling temperature: sent by both providers when configured
(winning over what the request asks for) or when the request asks for one (a text edit
format asks for 0), never otherwise; and the config file's model keys, per provider and per
model, reach the provider (edit format, auto_test, temperature) through the session's
switchable model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from acp_server.config import load_config
from acp_server.models.anthropic import AnthropicProvider
from acp_server.models.base import ModelConfigError
from acp_server.models.openai import OpenAIProvider
from acp_server.models.spec import load_model
from acp_server.models.switchable import SwitchableModel
from tests.support.providers import FAST, close_all, collect, request, track
from tests.support.sse_server import recorded, serve

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    yield
    await close_all()


@pytest.mark.parametrize(
    ("configured", "asked", "sent"),
    [(None, None, None), (None, 0.0, 0.0), (0.7, None, 0.7), (0.7, 0.0, 0.7)],
)
async def test_openai_sends_the_temperature_configured_else_asked_else_none(
    configured: float | None, asked: float | None, sent: float | None
) -> None:
    async with serve(recorded("openai_text")) as server:
        model = OpenAIProvider(
            "m", base_url=server.url + "/v1", options=replace(FAST, temperature=configured)
        )
        await collect(track(model), request(temperature=asked))
    body = server.requests[0].json()
    assert body.get("temperature") == sent
    assert ("temperature" in body) is (sent is not None)


@pytest.mark.parametrize(("configured", "asked", "sent"), [(None, None, None), (0.2, 0.0, 0.2)])
async def test_anthropic_sends_the_temperature_the_same_way(
    configured: float | None, asked: float | None, sent: float | None
) -> None:
    async with serve(recorded("anthropic_text")) as server:
        model = AnthropicProvider(
            "m",
            base_url=server.url,
            api_key="sk-ant-test",
            options=replace(FAST, temperature=configured),
        )
        await collect(track(model), request(temperature=asked))
    assert server.requests[0].json().get("temperature") == sent


async def test_model_keys_per_provider_and_per_model_reach_the_session_model(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[providers.openai]\ntemperature = 0.5\nauto_test = false\n\n"
        '[providers.openai.models."small"]\nedit_format = "whole_file"\ntemperature = 0\n'
    )
    providers = load_config(config).providers

    def model(name: str) -> SwitchableModel:
        loaded = load_model(f"openai:{name}", providers, environ={})
        return SwitchableModel(f"openai:{name}", loaded, lambda spec: loaded)

    small, other = model("small"), model("other")
    assert (small.edit_format, small.auto_test) == ("whole_file", False)
    assert (other.edit_format, other.auto_test) == (None, False)
    small_options = small._provider._http.options  # type: ignore[attr-defined]
    other_options = other._provider._http.options  # type: ignore[attr-defined]
    assert (small_options.temperature, other_options.temperature) == (0.0, 0.5)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('edit_format = "diff"', r'`edit_format` must be one of "tool_calls", "whole_file"'),
        ("temperature = 2.5", r"`temperature` must be a number from 0 to 2"),
        ("temperature = true", r"`temperature` must be a number from 0 to 2"),
        ('auto_test = "yes"', r"`auto_test` must be true or false"),
    ],
)
async def test_bad_model_keys_are_refused(tmp_path: Path, line: str, problem: str) -> None:
    config = tmp_path / "config.toml"
    for table in ("[providers.openai]", '[providers.openai.models."m"]'):
        config.write_text(f"{table}\n{line}\n")
        with pytest.raises(ModelConfigError, match=problem):
            load_config(config)
