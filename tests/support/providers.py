"""Helpers shared by the OpenAI and Anthropic provider tests."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import Any, TypeVar

import anyio

from acp_server.cancellation import TurnAborted, TurnCancellation, TurnSignal, UserCancel
from acp_server.models.base import (
    Finish,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    TextDelta,
    TextPart,
    ThoughtDelta,
    ToolCallEvent,
    UserMessage,
)
from acp_server.models.http import HttpOptions, close_provider

P = TypeVar("P")

OPEN: list[object] = []
"""Providers built by a test; the test modules' autouse fixture closes them afterwards."""


def track(provider: P) -> P:
    OPEN.append(provider)
    return provider


async def close_all() -> None:
    while OPEN:
        await close_provider(OPEN.pop())


FAST = HttpOptions(backoff=(0.01,), connect_timeout=2.0, read_timeout=5.0)
"""Tiny backoffs so retry tests take milliseconds."""


def request(text: str = "hello", **kwargs: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "session_id": "s1",
        "system_prompt": "",
        "messages": [UserMessage(parts=[TextPart(text=text)])],
        "tools": [],
    }
    fields.update(kwargs)
    return ModelRequest(**fields)


async def collect(
    provider: ModelProvider, req: ModelRequest | None = None, signal: TurnSignal | None = None
) -> list[ModelEvent]:
    signal = TurnCancellation().signal if signal is None else signal
    async with aclosing(provider.stream(req or request(), signal)) as stream:
        return [event async for event in stream]


def texts(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def thoughts(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ThoughtDelta))


def calls(events: list[ModelEvent]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (e.call.call_id, e.call.name, e.call.arguments)
        for e in events
        if isinstance(e, ToolCallEvent)
    ]


def finish(events: list[ModelEvent]) -> str:
    assert isinstance(events[-1], Finish), events
    assert sum(isinstance(e, Finish) for e in events) == 1
    return events[-1].reason


HANG_GUARD_S = 60.0
"""How long a provider test waits for an event before it fails: a guard against a hang, no
measure of speed (the replies that test an abort are delayed for an hour)."""
AN_HOUR = 3600.0


async def stream_until_aborted(
    provider: ModelProvider,
    when: Callable[[list[ModelEvent]], bool],
    req: ModelRequest | None = None,
) -> list[ModelEvent]:
    """Stream while another task aborts the turn as soon as `when(events so far)` holds;
    returns the events seen. Fails if the stream ends without TurnAborted, or if nothing
    happens within `HANG_GUARD_S` (a reply delayed for an hour shows that the abort, not the
    next piece of the reply, ended the stream)."""
    cancellation = TurnCancellation()
    events: list[ModelEvent] = []

    async def aborter() -> None:
        while not when(events):  # noqa: ASYNC110 (a condition on the consumer's list)
            await anyio.sleep(0.01)
        cancellation.abort(UserCancel())

    with anyio.fail_after(HANG_GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(aborter)
            stream: AsyncGenerator[ModelEvent, None] = provider.stream(
                req or request(), cancellation.signal
            )
            try:
                async with aclosing(stream):
                    async for event in stream:
                        events.append(event)
            except TurnAborted:
                pass
            else:
                raise AssertionError(f"the stream ended without TurnAborted: {events}")
    return events
