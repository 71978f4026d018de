"""Helpers shared by the OpenAI and Anthropic provider tests."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
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
    UserTurn,
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
        "messages": [UserTurn(parts=[TextPart(text=text)])],
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


async def abort_after(cancellation: TurnCancellation, seconds: float) -> float:
    """Sleep, abort, and return when the abort happened (monotonic)."""
    await anyio.sleep(seconds)
    cancellation.abort(UserCancel())
    return time.monotonic()


async def stream_until_aborted(
    provider: ModelProvider, after: float, req: ModelRequest | None = None
) -> tuple[list[ModelEvent], float, float]:
    """Stream while another task aborts after `after` s; returns the events seen, when the
    abort happened and when TurnAborted reached the consumer. Fails if it never does."""
    cancellation = TurnCancellation()
    events: list[ModelEvent] = []
    aborted_at: list[float] = []
    raised_at = 0.0

    async def aborter() -> None:
        aborted_at.append(await abort_after(cancellation, after))

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
            raised_at = time.monotonic()
        else:
            raise AssertionError(f"the stream ended without TurnAborted: {events}")
    return events, aborted_at[0], raised_at
