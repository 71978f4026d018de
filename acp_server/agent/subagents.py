"""The `task` tool: an in-process child agent with its own journaled session.

One `task` call starts one child agent (a subagent) and waits for its single turn:

- An already-aborted signal creates no child (`TurnAborted` at once).
- The child gets its own session `<parent>.task<N>`, journaled and linked to the parent session
  and the parent's tool call; it starts empty (spawn) or seeded with the parent's completed
  turns (`fork: true`).
- Its model is the parent's subagent variant (`subagent_provider`); its tools are the session's
  tools as they are when the call runs (`Toolbox.for_child`: MCP tools that connected since
  included), with a `task` tool of its own while it is shallower than the depth limit.
- Its driver runs in a task group owned by this call, so nothing of the child outlives the call:
  the child is disposed and its journal closed in a `finally`, shielded from cancellation.
- The parent signal reaches the child through an abort listener: `child.cancel(ParentCancel())`
  (or disposal, when the parent itself is being disposed, so the child's turn ends `disposed`).
- The child's tool calls are never announced to the client as the parent's; only progress text
  on the parent's own `task` call says what the child is doing.

Permissions: the child's calls go through the parent's policy (same mode, sandbox and "always"
answers, read live at each call), but a child cannot ask: nothing in the client knows its tool
call ids. A call the policy would ask about is denied with a reason that says so. Run the parent
in `accept_edits` or `bypass` mode (or answer "always" once in the parent) to let children act.

Concurrency: at most `max_concurrent` task calls of one parent run at once (a counter on the
parent's tool; extra calls fail with a clear message). The loop runs a turn's tool calls one
after another today, so the limit only matters once calls run concurrently.

See docs/shared notes "Subagents" (runtime semantics).

Over 500 lines: one state machine: one `task` call's life, from the child's journal to the
shielded `finally` that disposes it, reads in one place.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

import anyio
import msgspec
from anyio.abc import TaskGroup

from acp_server.cancellation import Disposed, ParentCancel, TurnAborted, TurnSignal
from acp_server.ids import IdFactory, random_ids
from acp_server.models.base import (
    ModelProvider,
    ModelRequest,
    ToolCallRequest,
    subagent_provider,
)
from acp_server.models.budget import DEFAULT_THRESHOLD
from acp_server.session import records as rec
from acp_server.session.journal import JournalStore
from acp_server.session.journal_format import JournalExists
from acp_server.session.log import SessionLog
from acp_server.session.recorder import new_header
from acp_server.tools.arguments import StructTool
from acp_server.tools.base import Location, ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.permissions import Answer, PermissionPolicy
from acp_server.tools.toolbox import TASK_TOOL_NAME, Toolbox
from acp_server.verdicts import Deny

from .agent import Agent, AgentHandle, spawn_agent
from .events import AgentEvent, MessageChunk, ToolCallAnnounced
from .inbox import Blocked, Dropped, TicketResult
from .instructions import DEFAULT_SYSTEM_PROMPT
from .loop import AgentConfig
from .no_progress import SILENT_END
from .seams import Seams
from .settings import SubagentLimits
from .status_line import background_status

__all__ = [
    "ChildJournal",
    "ChildJournalFactory",
    "ChildObserver",
    "SubagentLimits",
    "TaskTool",
    "journal_children",
    "offered_by",
    "session_task_tool",
]

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.25
"""At most one progress update per this many seconds for streamed text (tool calls always)."""
PROGRESS_TAIL = 400
"""How much of the child's latest text a progress update shows."""

NO_ASKING = (
    "subagents cannot ask for permission (the client never sees their tool calls); "
    "run the parent session in accept_edits or bypass mode, or allow this kind of action "
    "always in the parent session first"
)


@dataclass(frozen=True)
class ChildJournal:
    """A child session's log, already journaled (each append is written), with its flush and
    its close."""

    log: SessionLog
    flush: Callable[[], Awaitable[None]]
    close: Callable[[], None]


ChildJournalFactory = Callable[[str, str, str], ChildJournal]
"""`(child_session_id, parent_session_id, parent_tool_call_id) -> ChildJournal`. Raises
`JournalExists` when that id is taken (the tool then tries the next number)."""


def journal_children(
    store: JournalStore, cwd: str, extra_roots: Sequence[str]
) -> ChildJournalFactory:
    """A `ChildJournalFactory` that creates child journals in `store`, linked to their parent."""

    def create(session_id: str, parent_session_id: str, parent_tool_call_id: str) -> ChildJournal:
        journal = store.create(
            new_header(
                session_id,
                cwd,
                extra_roots,
                parent_session_id=parent_session_id,
                parent_tool_call_id=parent_tool_call_id,
            )
        )
        child_log = SessionLog(session_id)
        child_log.on_append(journal.append)
        return ChildJournal(child_log, journal.flush, journal.close)

    return create


class ChildObserver(Protocol):
    """Hears each child's life, awaited in order: `started` before the child's prompt is
    queued (so nothing of the child is seen before it), `ended` after its turn is over and it
    is idle (whatever the outcome). A client that shows children as sessions implements it
    (the bridge); the runtime works the same without one."""

    async def started(
        self, child: Agent, parent_session_id: str, call_id: str, description: str
    ) -> None: ...

    async def ended(self, child: Agent, result: TicketResult | None) -> None:
        """`result` is None when the child never ran (aborted before its prompt)."""


_DEFAULT_LIMITS = SubagentLimits()


class _RefusingAsker:
    """The child's permission asker: never asks, remembers that it was asked."""

    def __init__(self) -> None:
        self.asked = False

    async def ask(self, call_id: str, title: str, reason: str, signal: TurnSignal) -> Answer:
        self.asked = True
        return "reject_once"


class _ChildApproval:
    """The parent's policy applied to a child's calls, with asking turned into a denial."""

    def __init__(self, parent: PermissionPolicy, tools: Toolbox) -> None:
        self._parent = parent
        self._asker = _RefusingAsker()
        # The child's toolbox shares the parent's command sandbox, for its settings: a child's
        # web fetch in sandboxed mode follows `[sandbox] network` as the parent's does. The
        # mode is always the parent's, so setting it never changes whether the shared sandbox
        # is active.
        self._policy = tools.policy(self._asker, mode=parent.mode)

    async def approve(self, call: ToolCallRequest, signal: TurnSignal) -> Deny | None:
        # Read the parent's state live: a mode switch in the parent applies to its children.
        self._policy.mode = self._parent.mode
        self._policy.rules = self._parent.rules.copy()
        self._asker.asked = False
        verdict = await self._policy.approve(call, signal)
        if verdict is not None and self._asker.asked:
            return Deny(NO_ASKING)
        return verdict


class _Progress:
    """The child's events, as progress text on the parent's `task` call (text throttled)."""

    def __init__(self, call: ToolCallContext) -> None:
        self._call = call
        self._text = ""
        self._last = 0.0
        self.closed = False

    async def __call__(self, event: AgentEvent) -> None:
        if self.closed:
            return
        if isinstance(event, ToolCallAnnounced):
            self._text = ""
            self._last = time.monotonic()
            await self._call.progress(f"running {event.name}: {event.title}")
        elif isinstance(event, MessageChunk):
            self._text += event.text
            now = time.monotonic()
            if now - self._last >= PROGRESS_INTERVAL_S:
                self._last = now
                await self._call.progress(self._text[-PROGRESS_TAIL:])


class TaskArgs(msgspec.Struct, forbid_unknown_fields=True):
    prompt: Annotated[str, msgspec.Meta(description="The complete job for the subagent.")]
    description: Annotated[
        str | None, msgspec.Meta(description="A short (3-5 word) description shown to the user.")
    ] = None
    fork: Annotated[
        bool,
        msgspec.Meta(
            description="Seed the subagent with this conversation's finished turns.",
            extra_json_schema={"default": False},
        ),
    ] = False


class TaskTool(StructTool[TaskArgs]):
    """`task {prompt, description?, fork?}`: delegate a self-contained job to a subagent.

    Kind `think`: the call itself touches nothing (no files, no commands); each of the child's
    own tool calls is checked by the parent's policy. So the permission policy lets it run
    without a prompt in every mode, like other reasoning-only actions, while read-only mode
    still stops every edit and command the child attempts.
    """

    name = TASK_TOOL_NAME
    description = (
        "Start a subagent for a self-contained job and wait for its final answer. The subagent "
        "has the same tools (it cannot ask for permission) and starts with an empty "
        "conversation, or with this conversation's finished turns when `fork` is true. Give it "
        "a complete prompt: it sees nothing else. Returns the subagent's final message."
    )
    args_type = TaskArgs
    kind: ToolKind = "think"

    def __init__(
        self,
        *,
        parent_log: SessionLog,
        model: ModelProvider,
        toolbox: Toolbox,
        journals: ChildJournalFactory,
        policy: PermissionPolicy | None = None,
        ids: IdFactory = random_ids,
        depth: int = 0,
        limits: SubagentLimits = _DEFAULT_LIMITS,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        context_threshold: float = DEFAULT_THRESHOLD,
        on_child: Callable[[Agent], None] | None = None,
        observer: ChildObserver | None = None,
    ) -> None:
        """`toolbox` holds the parent's tools, each child's derive from it when the call runs
        (`Toolbox.for_child`: the child's task tool is made here); `depth` is the parent's (0
        for a client's session); a child compacts its own context past `context_threshold` of
        its window, as the session does; `on_child` hears each child agent right after it is
        created (observers, tests)."""
        self._parent_log = parent_log
        self._model = model
        self._toolbox = toolbox
        self._journals = journals
        self._policy = policy
        self._ids = ids
        self.depth = depth
        self._limits = limits
        self._system_prompt = system_prompt
        self._context_threshold = context_threshold
        self._on_child = on_child
        self.observer = observer
        self._numbers = 0
        self.running = 0

    def title(self, arguments: Mapping[str, Any]) -> str:
        description = arguments.get("description")
        if isinstance(description, str) and description.strip():
            return f"task: {description.strip()}"
        prompt = arguments.get("prompt")
        if isinstance(prompt, str) and prompt.strip():
            first = prompt.strip().splitlines()[0]
            return f"task: {first[:57] + '...' if len(first) > 60 else first}"
        return "task"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return ()

    # -- one call ----------------------------------------------------------------------------

    async def act(self, args: TaskArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        if not args.prompt.strip():
            return ToolOutput("`prompt` must be a non-empty string", failed=True)
        if self.running >= self._limits.max_concurrent:
            return ToolOutput(
                f"too many subagents at once: at most {self._limits.max_concurrent} task calls "
                "may run concurrently; wait for one to finish",
                failed=True,
            )
        self.running += 1
        try:
            described = (args.description or "").strip() or args.prompt.strip()
            return await self._run_child(args.prompt, described, args.fork, call, signal)
        finally:
            self.running -= 1

    def _create_journal(self, call_id: str) -> ChildJournal:
        parent_id = self._parent_log.session_id
        while True:
            self._numbers += 1
            child_id = f"{parent_id}.task{self._numbers}"
            try:
                return self._journals(child_id, parent_id, call_id)
            except JournalExists:
                continue  # left by an earlier process that ran this session

    def _child_tools(self, child_log: SessionLog) -> Toolbox:
        tools = self._toolbox.for_child()
        depth = self.depth + 1
        if depth < self._limits.max_depth:
            tools.add(
                [
                    TaskTool(
                        parent_log=child_log,
                        model=self._model,
                        toolbox=tools,
                        journals=self._journals,
                        policy=self._policy,
                        ids=self._ids,
                        depth=depth,
                        limits=self._limits,
                        system_prompt=self._system_prompt,
                        context_threshold=self._context_threshold,
                        on_child=self._on_child,
                        observer=self.observer,
                    )
                ]
            )
        return tools

    async def _run_child(
        self,
        prompt: str,
        description: str,
        fork: bool,
        call: ToolCallContext,
        signal: TurnSignal,
    ) -> ToolOutput:
        try:
            journal = self._create_journal(call.call_id)
        except Exception as exc:
            log.exception("cannot create a subagent session")
            return ToolOutput(f"cannot start the subagent: {exc}", failed=True)
        progress = _Progress(call)
        try:
            if fork:
                for record in self._parent_log.completed_turns():
                    journal.log.append(record)
            tools = self._child_tools(journal.log)
            seams = Seams()
            if self._policy is not None:
                seams.approval.append(_ChildApproval(self._policy, tools).approve)
                # Nobody can be asked in a child: tools that would ask are not offered.
                seams.request_config.append(offered_by(self._policy, can_ask=False))
            if tools.background is not None:  # the session's, which the child's calls may start
                seams.request_config.append(background_status(tools.background))
            async with anyio.create_task_group() as tg:
                handle = spawn_agent(
                    journal.log,
                    AgentConfig(
                        model=subagent_provider(self._model),
                        tools=tools.tools,
                        system_prompt=self._system_prompt,
                        context_threshold=self._context_threshold,
                    ),
                    tg,
                    seams=seams,
                    ids=self._ids,
                    durability_flush=journal.flush,
                )
                try:
                    output = await self._drive(
                        handle, prompt, (call.call_id, description), progress, signal, tg
                    )
                finally:
                    progress.closed = True
                    with anyio.CancelScope(shield=True):
                        await handle.dispose()
            if output is None:
                signal.raise_if_aborted()
                raise TurnAborted("the subagent was aborted")
            return output
        finally:
            try:
                journal.close()
            except Exception:
                log.exception("closing subagent session %s failed", journal.log.session_id)

    async def _drive(
        self,
        handle: AgentHandle,
        prompt: str,
        origin: tuple[str, str],
        progress: _Progress,
        signal: TurnSignal,
        tg: TaskGroup,
    ) -> ToolOutput | None:
        """Run the child's one turn; None when the parent's signal aborted it. `origin`: the
        parent's call id and the child's description (for the observer)."""
        child = handle.agent
        if self._on_child is not None:
            self._on_child(child)
        if self.observer is None:
            return await self._drive_child(child, handle, prompt, progress, signal, tg)
        call_id, description = origin
        await self.observer.started(child, self._parent_log.session_id, call_id, description)
        result: list[TicketResult] = []
        try:
            return await self._drive_child(child, handle, prompt, progress, signal, tg, result)
        finally:
            with anyio.CancelScope(shield=True):
                await self.observer.ended(child, result[0] if result else None)

    async def _drive_child(
        self,
        child: Agent,
        handle: AgentHandle,
        prompt: str,
        progress: _Progress,
        signal: TurnSignal,
        tg: TaskGroup,
        outcome: list[TicketResult] | None = None,
    ) -> ToolOutput | None:
        if signal.aborted:
            return None  # aborted while the child was being made: it never runs

        def on_parent_abort() -> None:
            if isinstance(signal.reason, Disposed):
                # The parent is being disposed: so is the child (its turn ends `disposed`).
                tg.start_soon(handle.dispose)
            else:
                child.cancel(ParentCancel())

        remove = signal.on_abort(on_parent_abort)
        finished = anyio.Event()
        timed_out: list[bool] = []

        async def time_limit() -> None:
            # Waited for, never abandoned: `finished` is set however the child's turn ends.
            with anyio.move_on_after(self._limits.max_seconds):
                await finished.wait()
            if not finished.is_set():
                timed_out.append(True)
                child.cancel(ParentCancel())

        try:
            tg.start_soon(time_limit)
            child.subscribe(progress)
            ticket = child.followup([rec.TextPart(text=prompt)])
            result = await ticket.wait()
            await child.when_idle()
        finally:
            finished.set()
            remove()
        if outcome is not None:
            outcome.append(result)
        answer = child.session.last_assistant_text()
        if answer.startswith(SILENT_END):  # the child's agent said its model gave no answer
            answer = ""
        if isinstance(result, rec.Completed):
            return ToolOutput(answer or "(the subagent finished without a message)")
        if timed_out and not signal.aborted:
            seconds = f"{self._limits.max_seconds:g}"
            return ToolOutput(
                f"the subagent was stopped after {seconds} s (the subagent time limit, "
                f"[subagents] max_seconds); its last message: {answer or '(none)'}",
                failed=True,
            )
        if signal.aborted:
            # A requested cancel makes any unfinished outcome `aborted` for the parent (raised
            # by the caller, outside the child's task group, so it is not wrapped in a group).
            return None
        return ToolOutput(_failure(result, answer), failed=True)


def _failure(result: object, answer: str) -> str:
    """A clear message for a child turn that did not complete."""
    if isinstance(result, Blocked):
        why = f"its prompt was blocked: {result.reason}"
    elif isinstance(result, Dropped):
        why = "its prompt was dropped before it ran"
    elif isinstance(result, rec.MaxTokens):
        why = "it hit the model's output limit (max_tokens)"
    elif isinstance(result, rec.MaxTurnRequests):
        why = "it reached its step limit"
    elif isinstance(result, rec.Refusal):
        why = "the model refused"
    elif isinstance(result, rec.ErrorOutcome):
        why = f"it failed: {result.message}"
    elif isinstance(result, rec.Aborted):
        why = "it was aborted"
    elif isinstance(result, rec.DisposedOutcome):
        why = "it was disposed"
    else:
        why = f"it ended with {type(result).__name__}"
    text = f"the subagent did not finish: {why}"
    if answer:
        text += f"\nits last message:\n{answer}"
    return text


def session_task_tool(
    store: JournalStore,
    cwd: str,
    extra_roots: Sequence[str],
    session_log: SessionLog,
    model: ModelProvider,
    toolbox: Toolbox,
    policy: PermissionPolicy,
    ids: IdFactory | None,
    context_threshold: float = DEFAULT_THRESHOLD,
    observer: ChildObserver | None = None,
    limits: SubagentLimits | None = None,
) -> TaskTool:
    """The `task` tool of a client's session (depth 0): children journaled in `store` next to
    the session, with the session's tools (`toolbox`), model and permission policy; `observer`
    hears each child (and grandchild) start and end."""
    return TaskTool(
        parent_log=session_log,
        model=model,
        toolbox=toolbox,
        journals=journal_children(store, cwd, extra_roots),
        policy=policy,
        ids=ids if ids is not None else random_ids,
        context_threshold=context_threshold,
        observer=observer,
        limits=limits or SubagentLimits(),
    )


def offered_by(
    policy: PermissionPolicy, *, can_ask: bool
) -> Callable[[ModelRequest, TurnSignal], Awaitable[ModelRequest]]:
    """A request-config listener offering only the tools the policy's mode (read at each
    request: a mode switch applies from the next one) lets run; see `PermissionPolicy.offers`.
    `can_ask` False: a subagent's, where a call that would ask is refused."""

    async def configure(request: ModelRequest, signal: TurnSignal) -> ModelRequest:
        tools = policy.tools
        kept = [
            spec
            for spec in request.tools
            if (tool := tools.get(spec.name)) is None or policy.offers(tool, can_ask=can_ask)
        ]
        if len(kept) == len(request.tools):
            return request
        return msgspec.structs.replace(request, tools=kept)

    return configure
