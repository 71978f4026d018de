"""One model request of a step, fitted and streamed: its output budget set, compacted and
retried once if the server says it does not fit, then streamed: text and thoughts shown as
they come, tool calls shown while the model writes them (also those it writes as text), a
keep-alive while it is quiet, calls the model wrote as text recognised, and the answer recorded,
even when the stream is cut short.

The agent loop (`acp_server/agent/loop.py`) builds the request and decides what the answer
means; `acp_server/agent/tool_calls.py` runs the calls. See
docs/rfc/implemented/feature/2026-12-01-model-progress.md and
docs/rfc/implemented/feature/2026-12-01-text-tool-calls.md.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import aclosing

import msgspec

from acp_server.cancellation import TurnAborted, TurnSignal
from acp_server.ids import IdFactory
from acp_server.models.base import (
    ContextWindowExceeded,
    Finish,
    ModelError,
    ModelProvider,
    ModelRequest,
    TextDelta,
    ThoughtDelta,
    ToolCallDraft,
    ToolCallEvent,
    ToolCallRequest,
    Usage,
)
from acp_server.models.budget import ContextBudget
from acp_server.models.model_settings import EditFormat
from acp_server.models.output import output_limit_of
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.tools.base import Tool
from acp_server.tools.local_files import in_thread

from .compaction import Compactor
from .edit_blocks import block_call, creations_checked, edit_blocks
from .events import AgentEvent, MessageChunk, ThoughtChunk
from .progress import Drafts, keep_alive
from .text_call_start import CallStart
from .text_calls import reads_text_calls, text_calls
from .tool_calls import ToolCalls

__all__ = ["ModelStep"]

log = logging.getLogger(__name__)

NOT_A_CALL = "not run: the message was not a tool call after all; it stays text"
"""Why a call announced from the start of a message's text ends `failed` when the whole message
turns out not to be calls."""


class ModelStep:
    """Streams one agent's model requests, one step at a time. `tools` is the loop's live
    by-name table; `on_usage` hears every usage report as it comes."""

    def __init__(
        self,
        session: SessionLog,
        model: ModelProvider,
        compactor: Compactor,
        tools: Mapping[str, Tool],
        calls: ToolCalls,
        emit: Callable[[AgentEvent], Awaitable[None]],
        ids: IdFactory,
        budget: ContextBudget,
        alive_interval: float,
        on_usage: Callable[[Usage], None],
    ) -> None:
        self._session = session
        self._model = model
        self._compactor = compactor
        self._tools = tools
        self._calls = calls
        self._emit = emit
        self._ids = ids
        self._budget = budget
        self._alive_interval = alive_interval
        self._on_usage = on_usage

    async def stream_fitting(
        self,
        turn_id: str,
        request: ModelRequest,
        signal: TurnSignal,
        edit_format: EditFormat = "tool_calls",
    ) -> tuple[str, list[ToolCallRequest], str, ModelRequest]:
        """Stream one step's request, with its output budget. When the server says the request
        does not fit its context, compact (forced) and retry once in the same step; if that is
        refused too, or there is nothing to compact, the error names the window and the request
        size."""
        request = self._bounded(request)
        try:
            return (*await self.stream(turn_id, request, signal, edit_format), request)
        except ContextWindowExceeded as exc:
            refused = exc
        log.info("the server refused a request for its size; compacting: %s", refused.message)
        fitted = await self._compactor.fit(request, self._model, turn_id, signal, force=True)
        if fitted.status != "completed":
            raise refused.completed(self._budget.estimate(request), self._budget.window) from None
        retry = self._bounded(fitted.request)
        try:
            return (*await self.stream(turn_id, retry, signal, edit_format), retry)
        except ContextWindowExceeded as exc:
            raise exc.completed(self._budget.estimate(retry), self._budget.window) from None

    def _bounded(self, request: ModelRequest) -> ModelRequest:
        """`request` with its output budget: the model's limit, within what the window leaves
        (see acp_server/models/output.py)."""
        allowance = self._budget.output_allowance(request, output_limit_of(self._model))
        return msgspec.structs.replace(request, max_output_tokens=allowance)

    async def stream(
        self,
        turn_id: str,
        request: ModelRequest,
        signal: TurnSignal,
        edit_format: EditFormat = "tool_calls",
    ) -> tuple[str, list[ToolCallRequest], str]:
        message_id = self._ids("msg")
        pieces = _Pieces()
        calls: list[ToolCallRequest] = []
        finish = "stop"
        drafts = Drafts(turn_id, self._tools, self._emit)
        ours = _OurIds(self._ids)
        from_text: set[str] = set()
        blocks: set[str] = set()
        start = _TextStart(self._tools, self._ids) if reads_text_calls(self._model) else None
        used = self._budget.estimate(request)
        alive = keep_alive(self._emit, turn_id, used, self._budget.window, self._alive_interval)
        try:
            async with (
                aclosing(self._model.stream(request, signal)) as stream,
                alive as pulse,
            ):
                async for event in stream:
                    pulse.touch()
                    if isinstance(event, TextDelta):
                        pieces.add("text", event.text)
                        await self._emit(MessageChunk(turn_id, message_id, event.text))
                        if start is not None:
                            await start.feed(event.text, drafts)
                    elif isinstance(event, ThoughtDelta):
                        pieces.add("thought", event.text)
                        await self._emit(ThoughtChunk(turn_id, message_id, event.text))
                    elif isinstance(event, ToolCallDraft):
                        await drafts.add(ours.of_draft(event))
                        if start is not None:
                            start.stop()  # the response makes API calls
                    elif isinstance(event, ToolCallEvent):
                        calls.append(ours.of_call(event.call))
                        if start is not None:
                            start.stop()
                    elif isinstance(event, Usage):
                        self._on_usage(event)
                    elif isinstance(event, Finish):
                        finish = event.reason
            announced = start.announced if start is not None else None
            if not calls and finish == "stop" and reads_text_calls(self._model):
                recognised = await self._text_calls(turn_id, pieces, announced)
                if recognised:
                    calls.extend(recognised)
                    from_text.update(c.call_id for c in recognised)
                    finish = "tool_calls"
            if not calls and finish == "stop" and edit_format != "tool_calls":
                edits = await self._edit_calls(pieces, edit_format)
                calls.extend(edits)
                blocks.update(c.call_id for c in edits)
                finish = "tool_calls" if edits else finish
            if announced is not None and announced[0] not in from_text and finish != "max_tokens":
                await drafts.close(announced[0], NOT_A_CALL)
        except TurnAborted:
            await drafts.close_unfinished(set(), "cancelled")
            raise
        except ModelError:
            await drafts.close_unfinished(set(), "not run: the model request failed")
            raise
        finally:
            # What the user saw is recorded even when the stream was cut short.
            parts = pieces.parts()
            if parts or calls:
                self._session.recorder.assistant_message(
                    turn_id,
                    message_id,
                    parts,
                    calls,
                    from_text=from_text,
                    edit_blocks=blocks,
                    model_ids=ours.model,
                )
        await drafts.close_unfinished(
            {c.call_id for c in calls},
            "not run: the model's response ended before this call was complete",
        )
        self._calls.drafted = drafts.call_ids  # the tool calls of this step see them
        self._calls.edit_blocks = frozenset(blocks)
        signal.raise_if_aborted()
        text = "".join(p.text for p in parts if isinstance(p, rec.TextPart))
        return text, calls, finish

    async def _text_calls(
        self, turn_id: str, pieces: _Pieces, announced: tuple[str, str] | None
    ) -> list[ToolCallRequest]:
        """The calls the model wrote as its whole message, if it did (see text_calls.py); the
        client is told they run as calls. The first keeps the id it was announced under while
        it streamed (`announced`: id and name), when it is that call."""
        text = "".join(p.text for p in pieces.parts() if isinstance(p, rec.TextPart))
        found = text_calls(text, self._tools)
        if not found:
            return []
        names = ", ".join(call.name for call in found)
        log.info("the model wrote %d call(s) as text (%s); running them", len(found), names)
        if len(found) == 1:
            article = "an" if names[0] in "aeiou" else "a"
            said = f"the model wrote {article} {names} call as text; it runs as a tool call."
        else:
            said = f"the model wrote {len(found)} calls as text ({names}); they run as tool calls."
        note = f"\n\n(acp-server: {said})"
        await self._emit(MessageChunk(turn_id, self._ids("msg"), note, from_agent=True))
        same = announced is not None and announced[1] == found[0].name
        ids = [announced[0]] if announced is not None and same else []  # else: closed failed
        ids.extend(self._ids("call") for _ in found[len(ids) :])
        return [
            ToolCallRequest(call_id=call_id, name=call.name, arguments=call.arguments)
            for call_id, call in zip(ids, found, strict=True)
        ]

    async def _edit_calls(self, pieces: _Pieces, edit_format: EditFormat) -> list[ToolCallRequest]:
        """The calls that apply the edit blocks of the model's answer (edit_blocks.py)."""
        text = "".join(p.text for p in pieces.parts() if isinstance(p, rec.TextPart))
        found = await in_thread(creations_checked, edit_blocks(text, edit_format), self._located)
        if found:
            log.info("the model's answer holds %d edit block(s); applying them", len(found))
        return [block_call(block, self._ids("call")) for block in found]

    def _located(self, path: str) -> str | None:
        """The absolute path `write_file` would write for `path` (None if it cannot tell)."""
        writer = self._tools.get("write_file")
        locations = writer.locations({"path": path}) if writer is not None else ()
        return locations[0].path if locations else None


class _OurIds:
    """Our id for each tool call of one response. The model server's id pairs a call's drafts
    with the call, and is kept (`model`) to pair the call with its result in later requests; a
    server reusing an id (in another step, or for a second call after the first completed)
    changes nothing the client sees (see
    docs/rfc/implemented/architecture/2026-12-06-tool-call-ids.md)."""

    def __init__(self, ids: IdFactory) -> None:
        self._ids = ids
        self._drafting: dict[str, str] = {}
        """Model id -> ours, for the calls drafted and not complete yet."""
        self.model: dict[str, str] = {}
        """Ours -> the model server's id, for every call of the response."""

    def of_draft(self, draft: ToolCallDraft) -> ToolCallDraft:
        ours = self._drafting.get(draft.call_id)
        if ours is None:
            ours = self._drafting[draft.call_id] = self._ids("call")
            self.model[ours] = draft.call_id
        return msgspec.structs.replace(draft, call_id=ours)

    def of_call(self, call: ToolCallRequest) -> ToolCallRequest:
        ours = self._drafting.pop(call.call_id, None) or self._ids("call")
        self.model[ours] = call.call_id
        return msgspec.structs.replace(call, call_id=ours)


class _TextStart:
    """The start of a call the model writes as text in this response's message, announced as
    a drafted call once seen (see text_call_start.py)."""

    def __init__(self, tools: Mapping[str, Tool], ids: IdFactory) -> None:
        self._watch = CallStart(tools)
        self._ids = ids
        self._stopped = False
        self.announced: tuple[str, str] | None = None
        """The announced call's id and tool name."""

    def stop(self) -> None:
        """Watch no more (a call already announced stays, to be closed at the end)."""
        self._stopped = True

    async def feed(self, text: str, drafts: Drafts) -> None:
        watch = self._watch
        if self._stopped:
            return
        if watch.watching:
            watch.feed(text)
        if watch.name is None:
            return
        if self.announced is None:
            self.announced = (self._ids("call"), watch.name)
        await drafts.add_text(self.announced[0], watch.name, watch.arguments)


class _Pieces:
    """Streamed chunks of one assistant message, merged by kind without quadratic copying."""

    def __init__(self) -> None:
        self._runs: list[tuple[str, list[str]]] = []

    def add(self, kind: str, text: str) -> None:
        if self._runs and self._runs[-1][0] == kind:
            self._runs[-1][1].append(text)
        else:
            self._runs.append((kind, [text]))

    def parts(self) -> list[rec.TextPart | rec.ThoughtPart]:
        return [
            rec.TextPart(text="".join(chunks))
            if kind == "text"
            else rec.ThoughtPart(text="".join(chunks))
            for kind, chunks in self._runs
        ]
