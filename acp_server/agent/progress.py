"""What the client sees while a model request runs, besides text and thoughts.

- **Tool calls as they are written** (`Drafts`): a call is announced (`tool_call`, status
  `pending`, its name and kind) as soon as its name has streamed, and its raw input (the
  argument text so far) is updated at most every `DRAFT_INTERVAL_S` while the arguments
  stream. When the call is complete the loop completes that announcement (title, parsed
  input, locations); a drafted call the response never completed (cut by the output limit, a
  cancel, a failed request) ends `failed`, saying why. A call the model writes as text is
  announced the same way once its start is seen (`add_text`, see text_call_start.py); its raw
  input is what parses of its arguments so far, an object.
- **Still alive** (`keep_alive`): when a request has streamed nothing for `alive_interval`
  seconds (prefill of a long prompt on a small machine, or a provider that does not stream
  what it generates), a `ModelWaiting` event is sent, and again after each further quiet
  interval, so a client's watchdog sees the session is working.

The keep-alive task never outlives the request: it stops when the stream ends, and its events
are sent shielded, so a cancel never cuts a notification in half.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from acp_server.models.base import ToolCallDraft
from acp_server.tools.base import Tool, ToolKind

from .events import AgentEvent, ModelWaiting, ToolCallDrafted, ToolCallProgress

__all__ = ["ALIVE_INTERVAL_S", "DRAFT_INTERVAL_S", "Drafts", "Pulse", "keep_alive"]

DRAFT_INTERVAL_S = 0.2
"""The least time between two raw-input updates of one drafted call."""
ALIVE_INTERVAL_S = 5.0
"""Quiet seconds of a model request before the client is told it is still running."""

Emit = Callable[[AgentEvent], Awaitable[None]]


class _Draft:
    __slots__ = ("known", "last_shown", "name", "pieces", "shown")

    def __init__(self, name: str) -> None:
        self.name = name
        self.pieces: list[str] = []
        self.last_shown = time.monotonic()
        self.shown = 0  # pieces included in the last update
        self.known: Mapping[str, Any] | None = None  # a text call's arguments last shown


class Drafts:
    """The drafted tool calls of one model request."""

    def __init__(self, turn_id: str, tools: Mapping[str, Tool], emit: Emit) -> None:
        self._turn_id = turn_id
        self._tools = tools
        self._emit = emit
        self._drafts: dict[str, _Draft] = {}

    @property
    def call_ids(self) -> frozenset[str]:
        """The calls announced while they were written."""
        return frozenset(self._drafts)

    async def add(self, draft: ToolCallDraft) -> None:
        known = self._drafts.get(draft.call_id)
        if known is None:
            known = self._drafts[draft.call_id] = _Draft(draft.name)
            if draft.arguments:
                known.pieces.append(draft.arguments)
            known.shown = len(known.pieces)
            await self._show(draft.call_id, known, first=True)
            return
        if draft.arguments:
            known.pieces.append(draft.arguments)
        if time.monotonic() - known.last_shown >= DRAFT_INTERVAL_S:
            await self._show(draft.call_id, known, first=False)

    async def add_text(
        self, call_id: str, name: str, arguments: Callable[[], Mapping[str, Any] | None]
    ) -> None:
        """A call the model is writing as text has grown: the first report announces it with
        what is known of its arguments (`arguments()`, an object, or None: no raw input);
        later ones update the raw input when that has changed, at most every
        `DRAFT_INTERVAL_S` (`arguments` is only asked then)."""
        known = self._drafts.get(call_id)
        if known is None:
            known = self._drafts[call_id] = _Draft(name)
            known.known = arguments()
            await self._emit(
                ToolCallDrafted(
                    self._turn_id, call_id, name, self._kind(name), known.known, first=True
                )
            )
            return
        if time.monotonic() - known.last_shown < DRAFT_INTERVAL_S:
            return
        now = arguments()
        if now is None or now == known.known:
            return
        known.known, known.last_shown = now, time.monotonic()
        await self._emit(
            ToolCallDrafted(self._turn_id, call_id, name, self._kind(name), now, first=False)
        )

    def _kind(self, name: str) -> ToolKind:
        tool = self._tools.get(name)
        return tool.kind if tool is not None else "other"

    async def _show(self, call_id: str, draft: _Draft, *, first: bool) -> None:
        draft.last_shown = time.monotonic()
        draft.shown = len(draft.pieces)
        await self._emit(
            ToolCallDrafted(
                self._turn_id,
                call_id,
                draft.name,
                self._kind(draft.name),
                "".join(draft.pieces),
                first,
            )
        )

    async def close(self, call_id: str, why: str) -> None:
        """End the drafted call `call_id`, which will not become a call, as failed with `why`."""
        if self._drafts.pop(call_id, None) is not None:
            await self._emit(ToolCallProgress(self._turn_id, call_id, "failed", why))

    async def close_unfinished(self, finished: set[str], why: str) -> None:
        """End every drafted call that did not become a call (`finished` holds the ids of
        those that did) as failed with `why`."""
        for call_id in self._drafts:
            if call_id not in finished:
                await self._emit(ToolCallProgress(self._turn_id, call_id, "failed", why))
        self._drafts = {key: value for key, value in self._drafts.items() if key in finished}


class Pulse:
    """When the request last streamed something."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = time.monotonic()

    def touch(self) -> None:
        self.last = time.monotonic()


@asynccontextmanager
async def keep_alive(
    emit: Emit, turn_id: str, used: int, window: int, interval: float
) -> AsyncIterator[Pulse]:
    """Run the body with a keep-alive beside it (see the module docstring). Exceptions of the
    body pass through unwrapped (not as an exception group)."""
    pulse = Pulse()
    started = pulse.last
    stop = anyio.Event()
    failure: Exception | None = None

    async def beat() -> None:
        while True:
            with anyio.move_on_after(max(0.0, pulse.last + interval - time.monotonic())):
                await stop.wait()
            if stop.is_set():
                return
            now = time.monotonic()
            if now - pulse.last >= interval:
                pulse.last = now
                with anyio.CancelScope(shield=True):
                    await emit(ModelWaiting(turn_id, round(now - started, 1), used, window))

    async with anyio.create_task_group() as tg:
        tg.start_soon(beat)
        try:
            yield pulse
        except Exception as exc:
            failure = exc
        finally:
            stop.set()
    if failure is not None:
        raise failure
