"""Compaction: a step of the turn that makes the conversation fit the model's context again.

It runs before a model request whose estimate is over the budget's limit (or after the server
said the context was exceeded, or for `/compact`), under the turn's signal:

1. Trim: the bodies of tool results older than the last few turns become one-line stubs. If the
   request now fits, a `context/compaction` record without a summary says so.
2. Summarize: everything before the last few turns (fewer if that is what it takes) is replaced
   by a summary the same model writes in a request without tools. The record holds the summary.

Nothing is written until the compaction has succeeded, so a cancel (the summary request stops
at once, the turn ends `aborted`) or a failed summary request leaves the log as it was. See
docs/rfc/implemented/architecture/2026-12-01-context-compaction.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Literal, Protocol

from acp_server.cancellation import TurnAborted, TurnSignal
from acp_server.models.base import (
    AssistantMessage,
    ConversationItem,
    Finish,
    ModelError,
    ModelProvider,
    ModelRequest,
    TextDelta,
    TextPart,
    ToolResultMessage,
    UserMessage,
)
from acp_server.models.budget import estimate_request
from acp_server.session import records as rec
from acp_server.session.log import SessionLog

from .conversation import SUMMARY_PREFIX, Conversation, compacted, summary_item
from .events import AgentEvent, CompactionEnded, CompactionStarted, MessageChunk

KEEP_TURNS = 3
"""Turns kept verbatim, the current one included, when there are enough of them to fit."""
SUMMARY_SHARE = 8
"""The summary may use at most 1/SUMMARY_SHARE of the window (and at most SUMMARY_TOKENS)."""
SUMMARY_TOKENS = 4_000
ENTRY_CHARS = 2_000
"""Characters of one message or tool result shown to the summarizer (head and tail kept)."""
CHARS_PER_TOKEN = 2
"""For sizing the summarizer's transcript before it is estimated: few characters per token,
so the first cut is rarely too large."""

SUMMARIZER_SYSTEM = (
    "You condense a coding session between a user and an AI coding agent so that the agent "
    "can carry on from your notes alone, without the transcript. Write plain prose and short "
    "lists, no preamble."
)
SUMMARIZER_TASK = (
    "Write the notes now. Cover, in this order:\n"
    "1. What the user is trying to achieve, including constraints and preferences they stated.\n"
    "2. Decisions made and why, and approaches that were tried and dropped.\n"
    "3. Files read, created or changed (paths), with what matters about each.\n"
    "4. Errors met and how they were resolved, or that they were not.\n"
    "5. Work still open: what was being done last and the next steps.\n"
    "Keep exact names, paths, commands and numbers. Leave out pleasantries and anything the "
    "agent can cheaply look up again."
)


class Budget(Protocol):
    """What compaction needs of a session's context budget."""

    @property
    def window(self) -> int: ...

    @property
    def limit(self) -> int: ...

    def estimate(self, request: ModelRequest) -> int: ...

    def forget_usage(self) -> None: ...


@dataclass(frozen=True)
class CompactionResult:
    """How a compaction ended; `request` is the request to send (compacted when completed)."""

    status: Literal["completed", "failed", "not_needed"]
    request: ModelRequest
    error: str | None = None


class Compactor:
    """Compacts one agent's conversation; the loop owns it and calls `fit`."""

    def __init__(
        self,
        session: SessionLog,
        conversation: Conversation,
        budget: Budget,
        ids: Callable[[str], str],
        emit: Callable[[AgentEvent], Awaitable[None]],
        guess: Callable[[ModelRequest], int] = estimate_request,
    ) -> None:
        """`budget.estimate` sizes the request about to be sent (it builds on the provider's
        last report, which describes the uncompacted history); `guess` sizes the requests a
        compaction would make, from their content alone."""
        self._guess = guess
        self._session = session
        self._conversation = conversation
        self._budget = budget
        self._ids = ids
        self._emit = emit

    async def fit(
        self,
        request: ModelRequest,
        model: ModelProvider,
        turn_id: str | None,
        signal: TurnSignal,
        *,
        force: bool = False,
        summarize: bool = False,
        instructions: str | None = None,
    ) -> CompactionResult:
        """Compact when `request` is over the budget's limit (always when `force`: the server
        said it does not fit, so a trim must at least halve the estimate to count), and return
        the request rebuilt from the compacted conversation. `summarize` (for `/compact`) skips
        the trim stage; `instructions` go to the summarizer. Raises TurnAborted on a cancel,
        having written nothing."""
        budget = self._budget
        before = budget.estimate(request)
        if not force and before <= budget.limit:
            return CompactionResult("not_needed", request)
        target = min(budget.limit, before // 2) if force else budget.limit
        prefix = request.messages[: len(request.messages) - len(self._conversation.items)]
        bounds = self._bounds(turn_id)
        if not bounds:
            return CompactionResult("failed", request, "nothing older than this turn to compact")
        compaction_id = self._ids("compact")
        items = list(self._conversation.items)
        reading = items  # what the summarizer reads: stubs once a trim was tried
        if not summarize:
            # The trim costs no model request, so cut as deep as it takes before summarizing.
            for kept_from, bound in bounds:
                trimmed, _ = compacted(items, bound, None)
                if trimmed == reading:
                    continue
                reading = trimmed
                after = self._guess(_with(request, prefix, trimmed))
                if after <= target:
                    await self._emit(CompactionStarted(turn_id, compaction_id))
                    self._record(compaction_id, kept_from, None, turn_id, before, after)
                    await self._emit(
                        CompactionEnded(
                            turn_id, compaction_id, "completed", None, None, after, budget.window
                        )
                    )
                    return CompactionResult("completed", self._rebuilt(request, prefix))
        allowance = max(256, min(SUMMARY_TOKENS, budget.window // SUMMARY_SHARE))
        kept_from, bound = self._choose(bounds, items, request, prefix, allowance)
        await self._emit(CompactionStarted(turn_id, compaction_id))
        try:
            summary = await self._summarize(reading[:bound], model, allowance, instructions, signal)
            signal.raise_if_aborted()  # the answer came in as the cancel did: write nothing
        except TurnAborted:
            await self._emit(
                CompactionEnded(turn_id, compaction_id, "cancelled", None, None, None, None)
            )
            raise
        except ModelError as exc:
            await self._emit(
                CompactionEnded(turn_id, compaction_id, "failed", None, exc.message, None, None)
            )
            return CompactionResult("failed", request, exc.message)
        after = self._guess(_with(request, prefix, [summary_item(summary), *items[bound:]]))
        self._record(compaction_id, kept_from, summary, turn_id, before, after)
        await self._emit(
            CompactionEnded(
                turn_id, compaction_id, "completed", summary, None, after, budget.window
            )
        )
        return CompactionResult("completed", self._rebuilt(request, prefix))

    async def command(
        self,
        request: ModelRequest,
        model: ModelProvider,
        instructions: str | None,
        signal: TurnSignal,
    ) -> rec.Outcome:
        """A `/compact` command's turn: compact now, whatever the size, and say how it went.
        The caller has resolved the budget's window for `model`."""
        result = await self.fit(
            request, model, None, signal, force=True, summarize=True, instructions=instructions
        )
        if result.status == "completed":
            text = "Compacted the conversation."
        else:
            text = f"The conversation was not compacted: {result.error}."
        await self._emit(MessageChunk(None, self._ids("msg"), text))
        return rec.Completed()

    def _bounds(self, turn_id: str | None) -> list[tuple[str, int]]:
        """Where a compaction may cut, most kept first: the prompts of the last turns, then the
        latest assistant message of the running turn. Only cuts with something before them."""
        conversation = self._conversation
        ids = conversation.prompt_ids(KEEP_TURNS)
        latest = self._latest_assistant(turn_id)
        if latest is not None:
            ids.append(latest)
        bounds = []
        for message_id in ids:
            index = conversation.position(message_id)
            if index is None:
                continue
            first = conversation.items[0] if conversation.items else None
            only_summary = index == 1 and _is_summary(first)
            if index > 0 and not only_summary:
                bounds.append((message_id, index))
        return bounds

    def _latest_assistant(self, turn_id: str | None) -> str | None:
        if turn_id is None:
            return None
        for record in reversed(self._session.records):
            if isinstance(record, rec.AssistantMessage):
                return record.message_id if record.turn_id == turn_id else None
            if isinstance(record, rec.TurnStart):
                return None
        return None

    def _choose(
        self,
        bounds: list[tuple[str, int]],
        items: list[ConversationItem],
        request: ModelRequest,
        prefix: Sequence[ConversationItem],
        allowance: int,
    ) -> tuple[str, int]:
        """The cut that keeps the most while the rest plus a summary fits the limit."""
        placeholder = summary_item("x" * allowance * CHARS_PER_TOKEN * 2)
        for message_id, index in bounds:
            rest = _with(request, prefix, [placeholder, *items[index:]])
            if self._guess(rest) <= self._budget.limit:
                return message_id, index
        return bounds[-1]

    async def _summarize(
        self,
        items: Sequence[ConversationItem],
        model: ModelProvider,
        allowance: int,
        instructions: str | None,
        signal: TurnSignal,
    ) -> str:
        task = SUMMARIZER_TASK
        if instructions:
            task += f"\n\nThe user asked for this compaction and added: {instructions}"
        room = max(1_000, (self._budget.limit - allowance) * CHARS_PER_TOKEN)
        while True:
            request = ModelRequest(
                session_id=self._session.session_id,
                system_prompt=SUMMARIZER_SYSTEM,
                messages=[
                    UserMessage(parts=[TextPart(text=transcript(items, room) + "\n\n" + task)])
                ],
                tools=[],
                max_output_tokens=allowance,
            )
            if self._guess(request) + allowance <= self._budget.window or room <= 1_000:
                break
            room //= 2
        pieces: list[str] = []
        finish = "stop"
        async with aclosing(model.stream(request, signal)) as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    pieces.append(event.text)
                elif isinstance(event, Finish):
                    finish = event.reason
        summary = "".join(pieces).strip()
        if not summary:
            raise ModelError("the model wrote an empty summary")
        if finish == "max_tokens":
            summary += "\n[the summary was cut at its length limit]"
        return summary

    def _record(
        self,
        compaction_id: str,
        kept_from: str,
        summary: str | None,
        turn_id: str | None,
        before: int,
        after: int,
    ) -> None:
        self._session.recorder.compaction(
            compaction_id,
            kept_from,
            summary=summary,
            turn_id=turn_id,
            tokens_before=before,
            tokens_after=after,
        )
        self._budget.forget_usage()  # the history was rewritten: estimate it afresh

    def _rebuilt(self, request: ModelRequest, prefix: Sequence[ConversationItem]) -> ModelRequest:
        return _with(request, prefix, self._conversation.items)


def _with(
    request: ModelRequest,
    prefix: Sequence[ConversationItem],
    items: Sequence[ConversationItem],
) -> ModelRequest:
    return ModelRequest(
        session_id=request.session_id,
        system_prompt=request.system_prompt,
        messages=[*prefix, *items],
        tools=request.tools,
        max_output_tokens=request.max_output_tokens,
        status=request.status,
    )


def _is_summary(item: ConversationItem | None) -> bool:
    return (
        isinstance(item, UserMessage)
        and bool(item.parts)
        and isinstance(item.parts[0], TextPart)
        and item.parts[0].text.startswith(SUMMARY_PREFIX)
    )


def _clip(text: str, limit: int = ENTRY_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def transcript(items: Sequence[ConversationItem], room: int) -> str:
    """The items as a plain transcript for the summarizer, newest kept when over `room`
    characters (a previous summary, the first item, is always kept); what was cut is said."""
    entries: list[str] = []
    for item in items:
        if isinstance(item, UserMessage):
            text = "\n".join(p.text if isinstance(p, TextPart) else "[image]" for p in item.parts)
            if text.startswith(SUMMARY_PREFIX):
                entries.append("SUMMARY OF EARLIER WORK:\n" + text[len(SUMMARY_PREFIX) :])
            else:
                entries.append("USER:\n" + _clip(text))
        elif isinstance(item, AssistantMessage):
            calls = "".join(
                f"\n[called {c.name} {_clip(str(c.arguments), 300)}]" for c in item.tool_calls
            )
            entries.append("AGENT:\n" + _clip(item.text) + calls)
        elif isinstance(item, ToolResultMessage):
            status = "failed" if item.is_error else "result"
            entries.append(f"TOOL {status}:\n" + _clip(item.output))
    kept: list[str] = []
    used = 0
    head = entries[0] if entries and entries[0].startswith("SUMMARY OF EARLIER") else None
    body = entries[1:] if head is not None else entries
    if head is not None:
        used += len(head)
    for entry in reversed(body):
        if used + len(entry) > room and kept:
            break
        kept.append(entry)
        used += len(entry)
    kept.reverse()
    omitted = len(body) - len(kept)
    parts = [head] if head is not None else []
    if omitted:
        parts.append(f"[{omitted} earlier entries left out to fit]")
    return "TRANSCRIPT:\n\n" + "\n\n".join([*parts, *kept])
