"""A session's switchable model (acp_server/models/switchable.py): a switch applies from the next
request and never to a stream in flight, each spec is loaded once, a spec that cannot be loaded
leaves the current model in place, and the output limit, text tool calls and subagent variant
follow the model chosen now. Its context window: tests/models/test_window.py; switching through
the real process: tests/e2e/test_session_commands.py."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from acp_server.cancellation import TurnCancellation, TurnSignal
from acp_server.models.base import (
    Finish,
    ModelConfigError,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    TextDelta,
)
from acp_server.models.output import DEFAULT_OUTPUT_TOKENS
from acp_server.models.switchable import SwitchableModel

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(session_id="s", system_prompt="", messages=[], tools=[])


class Named:
    """A provider that answers with its name, one word per event."""

    def __init__(self, name: str, limit: int | None = None, text_calls: bool = False) -> None:
        self.name = name
        self.max_output_tokens = limit
        self.text_tool_calls = text_calls

    async def stream(
        self, request: ModelRequest, signal: TurnSignal
    ) -> AsyncGenerator[ModelEvent, None]:
        yield TextDelta(text=self.name)
        yield TextDelta(text="again")
        yield Finish(reason="stop")


class Loader:
    """Loads `Named` providers, counting the loads; `bad` cannot be loaded."""

    def __init__(self) -> None:
        self.loads: list[str] = []

    def __call__(self, spec: str) -> ModelProvider:
        self.loads.append(spec)
        if spec == "bad":
            raise ModelConfigError("unknown provider 'bad'")
        return Named(spec, limit=100, text_calls=True)


def texts(events: list[ModelEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]


async def test_a_switch_applies_from_the_next_request_not_to_one_in_flight() -> None:
    model = SwitchableModel("first", Named("first"), Loader())
    signal = TurnCancellation().signal
    in_flight = model.stream(REQUEST, signal)
    events = [await anext(in_flight)]
    model.switch("second")
    events += [event async for event in in_flight]
    assert texts(events) == ["first", "again"]
    assert texts([e async for e in model.stream(REQUEST, signal)]) == ["second", "again"]
    assert (model.spec, model.name) == ("second", "second")


async def test_each_spec_is_loaded_once_and_the_first_is_never_reloaded() -> None:
    loader = Loader()
    model = SwitchableModel("first", Named("first"), loader)
    for spec in ("second", "first", "second", "first"):
        model.switch(spec)
    assert loader.loads == ["second"]


async def test_a_spec_that_cannot_be_loaded_keeps_the_current_model() -> None:
    model = SwitchableModel("first", Named("first"), Loader())
    with pytest.raises(ModelConfigError, match="unknown provider 'bad'"):
        model.switch("bad")
    assert (model.spec, model.name) == ("first", "first")


async def test_limits_text_calls_and_the_subagent_variant_follow_the_model_chosen_now() -> None:
    first = Named("first")
    model = SwitchableModel("first", first, Loader())
    assert (model.max_output_tokens, model.text_tool_calls) == (DEFAULT_OUTPUT_TOKENS, False)
    assert model.for_subagent() is first
    model.switch("second")
    assert (model.max_output_tokens, model.text_tool_calls) == (100, True)
    assert model.for_subagent().name == "second"
