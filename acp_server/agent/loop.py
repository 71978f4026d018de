"""AgentLoop: the driver of one agent. It owns the inbox, the turn holder and the status.

Order of one turn (each rule's reason is stated where it is enforced):
claim a follow-up -> install a fresh TurnCancellation -> status `running` -> prompt submission
-> `turn/start` -> steps -> balance tool calls -> clear the holder -> `turn/end` -> flush ->
settle the follow-up's ticket -> claim the next one, or status `idle`.
Closing a turn (outcome, not-run balance, `turn/end`, flush, ticket) is `turn_close.py`.
See docs/rfc/implemented/architecture/2026-11-30-explicit-turn-cancellation.md.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import anyio
from anyio.abc import TaskGroup

from acp_server.cancellation import (
    CancelCause,
    Disposed,
    TurnAborted,
    TurnCancellation,
    TurnSignal,
)
from acp_server.ids import IdFactory
from acp_server.models.base import (
    ConversationItem,
    ModelError,
    ModelProvider,
    ModelRequest,
    ToolSpec,
    Usage,
)
from acp_server.models.budget import DEFAULT_THRESHOLD, ContextBudget
from acp_server.redaction import redact
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.tools.base import Tool
from acp_server.tools.budget import ToolBudget
from acp_server.tools.test_command import DEFAULT_MAX_ROUNDS, ProjectTestCommand

from .call_checks import RepeatedCalls
from .compaction import Compactor
from .conversation import Conversation
from .edit_blocks import edits_applied
from .edit_formats import edit_format_of, shaped_request
from .events import (
    AgentEvent,
    MessageChunk,
    Status,
    TurnStarting,
    UserMessageRecorded,
)
from .failures import durable_error
from .inbox import Blocked, CompactTicket, Dropped, Inbox, PromptTicket
from .instructions import DEFAULT_SYSTEM_PROMPT
from .model_step import ModelStep
from .no_progress import FailedCalls, silent_end_message
from .progress import ALIVE_INTERVAL_S
from .seams import PromptSubmission, Seams, StepInfo, StepResult, TurnProgress
from .settings import DEFAULT_MAX_FAILED_CALLS, DEFAULT_MAX_REPEATED_CALLS, DEFAULT_MAX_STEPS
from .test_loop import TestLoop
from .tool_calls import ToolCalls
from .turn_close import TurnCloser

log = logging.getLogger(__name__)


EventSink = Callable[[AgentEvent], Awaitable[None]]


@dataclass(frozen=True)
class AgentConfig:
    """What an agent works with."""

    model: ModelProvider
    tools: Sequence[Tool] = ()
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    max_steps: int = DEFAULT_MAX_STEPS
    max_result_bytes: int = ToolBudget().max_result_bytes
    """Every tool result is cut to this before the model (or the journal) sees it."""
    context_threshold: float = DEFAULT_THRESHOLD
    """Fraction of the context window above which a request should be compacted first."""
    max_repeats: int = DEFAULT_MAX_REPEATED_CALLS
    """Repeats of one call with one result a turn may make before it ends."""
    max_failed: int = DEFAULT_MAX_FAILED_CALLS
    """Consecutive failures of one tool with one kind of error before the turn ends."""
    alive_interval: float = ALIVE_INTERVAL_S
    """Quiet seconds of a model request before the client hears it is still running."""
    test_command: Callable[[], ProjectTestCommand | None] | None = None
    """Finds the project's test command, for the test runs after the model's edits
    (acp_server/agent/test_loop.py); None: the agent runs no tests."""
    max_test_rounds: int = DEFAULT_MAX_ROUNDS
    """Test runs after the model's edits in one turn, at most."""
    cwd: str | None = None
    """The working directory: a text edit format names attached files relative to it."""


class AgentLoop:
    """Drives turns for one Agent. Private to the runtime; `Agent` is the public face."""

    def __init__(
        self,
        session: SessionLog,
        config: AgentConfig,
        seams: Seams,
        task_group: TaskGroup,
        ids: IdFactory,
        durability_flush: Callable[[], Awaitable[None]] | None,
    ) -> None:
        self.session = session
        self.config = config
        self.seams = seams
        self.inbox = Inbox()
        self.holder: TurnCancellation | None = None
        self.status: Status = "idle"
        self.disposing = False
        self.last_usage: Usage | None = None
        self.turn_usage: Usage | None = None
        """The running turn's usage: the sum over its model requests that reported any."""
        self.budget = ContextBudget(config.context_threshold)
        self.sinks: list[EventSink] = []
        self.status_listeners: list[Callable[[Status], None]] = []
        self.cancel_listeners: list[Callable[[CancelCause], None]] = []
        self._task_group = task_group
        self._ids = ids
        # Kept in step with the log, so a step never rebuilds the whole history.
        self.conversation = Conversation(session.records)
        session.on_append(self.conversation.add)
        self._compactor = Compactor(session, self.conversation, self.budget, ids, self._emit)
        self._tools = {tool.name: tool for tool in config.tools}
        self._tool_specs = [
            ToolSpec(name=t.name, description=t.description, parameters=dict(t.parameters))
            for t in config.tools
        ]
        self._calls = ToolCalls(session, self._tools, seams, self._emit, config.max_result_bytes)
        self._model_step = ModelStep(
            session,
            config.model,
            self._compactor,
            self._tools,
            self._calls,
            self._emit,
            ids,
            self.budget,
            config.alive_interval,
            self._count_usage,
        )
        self._tests = TestLoop(session, self._calls, self._emit, ids, config)
        self._closer = TurnCloser(
            self, session, self.inbox, self._calls, self._emit, ids, durability_flush
        )
        self._driving = False
        self._quiescent = anyio.Event()
        self._quiescent.set()

    def add_tools(self, tools: Sequence[Tool]) -> None:
        """Offer more tools from the next model request on; names already offered are kept."""
        for tool in tools:
            if tool.name in self._tools:
                continue
            self._tools[tool.name] = tool
            self._tool_specs.append(
                ToolSpec(
                    name=tool.name, description=tool.description, parameters=dict(tool.parameters)
                )
            )

    @property
    def window(self) -> int:
        """The context window of the model, as the budget knows it."""
        return self.budget.window

    # -- delivery -----------------------------------------------------------------------

    def followup(self, content: list[rec.Part]) -> PromptTicket:
        return self._enqueue(PromptTicket(content))

    def compact(self, instructions: str | None) -> PromptTicket:
        return self._enqueue(CompactTicket(instructions))

    def _enqueue(self, ticket: PromptTicket) -> PromptTicket:
        if self.disposing:
            ticket.resolve(Dropped())
            return ticket
        self.inbox.enqueue(ticket)
        self._wake()
        return ticket

    def steer(self, content: list[rec.Part]) -> None:
        if self.holder is None:
            self.followup(content)  # no open turn to steer: it becomes a turn of its own
        elif not self.disposing:
            self.inbox.steering.append(content)

    def inject(self, content: list[rec.Part]) -> None:
        if self.holder is not None:
            self.inbox.context.append(content)
        elif not self.disposing:
            self.session.recorder.user_message(self._ids("msg"), content, "context")

    # -- stopping -----------------------------------------------------------------------

    def cancel(self, cause: CancelCause, *, keep_inbox: bool) -> None:
        holder = self.holder
        if holder is not None:
            if holder.signal.aborted:
                # First cancel already won the holder; a later one may still clear new work.
                if not keep_inbox:
                    self.inbox.drop_pending()
                return
            self._cancel_requested(cause)
            if not keep_inbox:
                self.inbox.drop_pending()
            holder.abort(cause)
            return
        if self.inbox.queued and not keep_inbox:
            # The pre-run marker: work queued but not yet claimed. Claiming and installing a
            # holder happen in one synchronous step here, so the marker is applied at once:
            # exactly the work queued now is dropped; later follow-ups still run. Clearing
            # work makes the cancel effective, so it is announced like one (see
            # docs/rfc/implemented/architecture/2026-12-01-cancel-edges.md).
            self._cancel_requested(cause)
            self.inbox.drop_pending()
        # Idle with nothing queued (or keeping it): nothing to stop, nothing armed, no notice.

    def _cancel_requested(self, cause: CancelCause) -> None:
        # Observers hear the request before anything is cleared or aborted, so work they
        # queue now is cleared with the rest; their failures cannot veto the stop.
        for listener in list(self.cancel_listeners):
            try:
                listener(cause)
            except Exception:
                log.exception("a cancel-requested listener failed")

    async def dispose(self) -> None:
        self.disposing = True
        self.inbox.drop_pending()
        self.inbox.context.clear()
        if self.holder is not None:
            self.holder.abort(Disposed())
        await self.when_idle()
        self._set_status("disposed")

    async def when_idle(self) -> None:
        while self._driving:
            await self._quiescent.wait()

    # -- the driver ---------------------------------------------------------------------

    def _wake(self) -> None:
        if self._driving:
            return
        self._driving = True
        self._quiescent = anyio.Event()
        self._task_group.start_soon(self._drive)

    def _set_status(self, status: Status) -> None:
        if self.status == status:
            return
        self.status = status
        for listener in list(self.status_listeners):
            try:
                listener(status)
            except Exception:
                log.exception("a status listener failed")

    async def _drive(self) -> None:
        try:
            while not self.disposing:
                ticket = self.inbox.claim()
                if ticket is None:
                    break
                # The holder exists before anyone hears "running", so a listener's cancel
                # has something to abort.
                holder = TurnCancellation()
                self.holder = holder
                ticket.state = "running"
                self._set_status("running")
                if holder.signal.aborted:
                    # A running-status listener cancelled this follow-up before admission
                    # (and may have queued a replacement, which gets a fresh holder).
                    self.holder = None
                    self.inbox.steering.clear()  # as at any aborted turn's close
                    ticket.resolve(rec.DisposedOutcome() if self.disposing else rec.Aborted())
                    continue
                await self._run_turn(ticket, holder)
        finally:
            self.holder = None
            self._driving = False
            # Release when_idle() waiters before anyone hears "idle": an idle listener that
            # queues work wakes a new drive with a new event, which they then follow.
            self._quiescent.set()
            if not self.disposing:
                self._set_status("idle")

    # -- one turn -----------------------------------------------------------------------

    async def _run_turn(self, ticket: PromptTicket, holder: TurnCancellation) -> None:
        signal = holder.signal
        turn_id = self._ids("turn")
        self.last_usage = None  # usage describes this turn only, never a previous one
        self._calls.drafted = frozenset()
        self.turn_usage = None
        opened = False
        outcome: rec.Outcome | None = None
        hard_cancel = False
        try:
            try:
                # Before prompt submission, whose hooks may run (or ask the user) first.
                await self._emit(TurnStarting(turn_id))
                if isinstance(ticket, CompactTicket):
                    # Not opened: only a completed compaction leaves a record, so a cancelled
                    # or failed one leaves the log exactly as it was.
                    outcome = await self._compact_turn(ticket.instructions, signal)
                    return
                submission = PromptSubmission(list(ticket.content))
                for submit in self.seams.prompt_submit:
                    verdict = await submit(submission, signal)
                    signal.raise_if_aborted()
                    if verdict is not None:
                        self.holder = None
                        ticket.resolve(Blocked(verdict.reason))
                        return
                signal.raise_if_aborted()
                opened = True
                self.session.recorder.turn_started(turn_id)
                message_id = self._user_message(turn_id, submission.content, "prompt")
                # Told before the ticket hears it: a prompt's answer that waits for its
                # insertion comes after the message it names.
                await self._emit(
                    UserMessageRecorded(turn_id, message_id, tuple(submission.content))
                )
                ticket.insert(message_id)
                for extra in submission.context:
                    self._user_message(turn_id, extra, "context")
                outcome = await self._run_steps(turn_id, signal)
            except TurnAborted:
                pass
            except ModelError as exc:
                # The journal keeps a coarse error; the provider's text only reaches the
                # prompt's answer and the log, redacted.
                outcome = durable_error(exc)
                ticket.error_detail = redact(exc.message)
                log.warning("turn %s: %s", turn_id, ticket.error_detail)
            except Exception:
                log.exception("turn %s failed", turn_id)
                outcome = rec.ErrorOutcome(message="internal error in the agent; see its log")
        except anyio.get_cancelled_exc_class():
            hard_cancel = True  # the owner's scope is tearing down: this is a disposal
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await self._closer.close(ticket, signal, turn_id, opened, outcome, hard_cancel)

    async def _run_steps(self, turn_id: str, signal: TurnSignal) -> rec.Outcome:
        step = 0
        repeats = RepeatedCalls(self.config.max_repeats)
        failures = FailedCalls(self.config.max_failed)
        self._tests.start_turn()
        while True:
            signal.raise_if_aborted()  # work that returned normally after a cancel owes no step
            if step >= self.config.max_steps:
                return rec.MaxTurnRequests()
            step += 1
            info = StepInfo(turn_id, step)
            for pre_step in self.seams.pre_step:
                await pre_step(info, signal)
                signal.raise_if_aborted()
            self._drain_staged(turn_id)
            system_parts = [self.config.system_prompt]
            for assemble in self.seams.system_prompt:
                await assemble(system_parts, signal)
                signal.raise_if_aborted()
            prefix: list[ConversationItem] = []
            for add_prefix in self.seams.session_prefix:
                await add_prefix(prefix, signal)
                signal.raise_if_aborted()
            request = ModelRequest(
                session_id=self.session.session_id,
                system_prompt="\n\n".join(part for part in system_parts if part),
                messages=[*prefix, *self.conversation.items],
                tools=list(self._tool_specs),
            )
            for configure in self.seams.request_config:
                request = await configure(request, signal)
                signal.raise_if_aborted()
            await self.budget.resolve(self.config.model, signal)
            edit_format = edit_format_of(self.config.model)
            request = shaped_request(
                request, edit_format, self.budget.window, self.config.system_prompt, self.config.cwd
            )
            # Compaction is a step of its own under the turn's signal, before the request
            # that would not fit; see acp_server/agent/compaction.py.
            fitted = await self._compactor.fit(request, self.config.model, turn_id, signal)
            request = fitted.request
            self.session.recorder.step_started(turn_id, step)
            reported = self.last_usage
            text, calls, finish, request = await self._model_step.stream_fitting(
                turn_id, request, signal, edit_format
            )
            if self.last_usage is not None and self.last_usage is not reported:
                self.budget.record_usage(request, self.last_usage)
            result = StepResult(turn_id, step, text, calls, finish)
            for observe in self.seams.step_result:
                await observe(result, signal)
                signal.raise_if_aborted()
            if finish in ("max_tokens", "refusal"):
                self._end_step(turn_id, step, finish)
                return rec.MaxTokens() if finish == "max_tokens" else rec.Refusal()
            if calls:
                repeats.noted = failures.noted = False  # "noted": in this step's results
                outputs = await self._calls.run(turn_id, calls, signal, repeats, failures)
                if edits_applied(calls, outputs, self._calls.edit_blocks):
                    calls = []  # the answer was its edits, all applied: nothing to ask again
            self._end_step(turn_id, step, finish)
            stop_message = repeats.stop_message or failures.stop_message
            if stop_message is not None:
                await self._say(turn_id, stop_message)
                return rec.Completed()
            if calls or self.inbox.steering:
                continue
            if await self._tests.after_answer(turn_id, edit_format, signal):
                continue  # the tests failed after the model's edits: it was told so
            progress = TurnProgress(turn_id, step, text)
            for continuation in self.seams.continuation:
                await continuation(progress, signal)  # may object by steering
                signal.raise_if_aborted()
            if self.inbox.steering:
                continue
            for stop in self.seams.turn_stop:
                await stop(progress, signal)  # may object by steering, too
                signal.raise_if_aborted()
            if self.inbox.steering:
                continue
            if step > 1 and not text.strip():  # tool calls, then nothing: say that it ended
                await self._say(turn_id, silent_end_message(repeats.noted or failures.noted))
            return rec.Completed()

    async def _compact_turn(self, instructions: str | None, signal: TurnSignal) -> rec.Outcome:
        """A `/compact` command's turn (`Compactor.command`): the whole history, any size."""
        request = ModelRequest(
            session_id=self.session.session_id,
            system_prompt=self.config.system_prompt,
            messages=list(self.conversation.items),
            tools=list(self._tool_specs),
        )
        await self.budget.resolve(self.config.model, signal)
        return await self._compactor.command(request, self.config.model, instructions, signal)

    def _end_step(self, turn_id: str, step: int, finish: str) -> None:
        self.session.recorder.step_ended(turn_id, step, finish)

    def _count_usage(self, event: Usage) -> None:
        self.last_usage = event
        total = self.turn_usage
        self.turn_usage = event if total is None else total.plus(event)

    async def _say(self, turn_id: str, text: str) -> None:
        """A notice of the loop's own, shown and recorded as the agent's (origin `agent`): the
        client sees it marked, the model never reads it as its own words."""
        message_id = self._ids("msg")
        await self._emit(MessageChunk(turn_id, message_id, text, from_agent=True))
        self.session.recorder.assistant_message(
            turn_id, message_id, [rec.TextPart(text=text)], origin="agent"
        )

    def _drain_staged(self, turn_id: str) -> None:
        steering, context = self.inbox.take_staged()
        for content in context:
            self._user_message(turn_id, content, "context")
        for content in steering:
            self._user_message(turn_id, content, "steering")

    def _user_message(
        self,
        turn_id: str,
        content: list[rec.Part],
        origin: Literal["prompt", "context", "steering"],
    ) -> str:
        message_id = self._ids("msg")
        self.session.recorder.user_message(message_id, content, origin, turn_id)
        return message_id

    async def _emit(self, event: AgentEvent) -> None:
        for sink in list(self.sinks):
            try:
                await sink(event)
            except Exception:
                log.exception("an event sink failed on %s", type(event).__name__)


__all__ = ["AgentConfig", "AgentLoop", "Blocked", "Dropped", "EventSink"]
