"""In-test doubles for the agent runtime: a programmable model, a programmable tool, a seam
trace, and a helper that runs one agent inside a task group and disposes it afterwards.

Nothing here reaches into the loop: agents are driven through the public `Agent` surface and
observed through the session log, ticket results, events and seam listeners.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup

from acp_server.agent.agent import AgentHandle, spawn_agent
from acp_server.agent.loop import AgentConfig
from acp_server.agent.seams import (
    PromptSubmission,
    Seams,
    StepInfo,
    StepResult,
    TurnProgress,
)
from acp_server.cancellation import TurnSignal
from acp_server.models.base import (
    ConversationItem,
    Finish,
    FinishReason,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
    ToolCallRequest,
    UserMessage,
)
from acp_server.models.base import TextPart as ModelTextPart
from acp_server.models.window import ContextWindow
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.tools.base import ToolCallContext, ToolKind, ToolOutput
from acp_server.verdicts import Block, Deny

# Generous: only there so a broken runtime fails a test instead of hanging the suite.
DEADLINE = 10.0

END_STREAM = object()
"""Returned by a model action to end the stream right there (without a Finish)."""

Action = Callable[[ModelRequest, TurnSignal], Awaitable[object]]
ResponseItem = ModelEvent | Action
Response = Sequence[ResponseItem]

_call_numbers = itertools.count(1)

DEFAULT_RESPONSE: Response = (TextDelta(text="done"), Finish(reason="stop"))
"""What a model double answers once its scripted responses are used up."""


def text(value: str) -> list[rec.Part]:
    """User content of one text part."""
    return [rec.TextPart(text=value)]


def call(name: str = "probe", **arguments: Any) -> ToolCallEvent:
    """A tool call event with a call id unique in the whole test run."""
    return ToolCallEvent(
        call=ToolCallRequest(call_id=f"call_{next(_call_numbers)}", name=name, arguments=arguments)
    )


def finish(reason: FinishReason = "stop") -> Finish:
    return Finish(reason=reason)


def say(value: str) -> TextDelta:
    return TextDelta(text=value)


class Trace:
    """Which seam ran, in order, with the signal it received."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, TurnSignal]] = []

    def hit(self, seam: str, signal: TurnSignal) -> None:
        self.calls.append((seam, signal))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    @property
    def signals(self) -> list[TurnSignal]:
        return [signal for _, signal in self.calls]

    def seams(self) -> Seams:
        """Seams with one recording listener on each list (add blockers after these)."""
        seams = Seams()

        async def prompt_submit(submission: PromptSubmission, signal: TurnSignal) -> Block | None:
            self.hit("prompt_submit", signal)
            return None

        async def system_prompt(parts: list[str], signal: TurnSignal) -> None:
            self.hit("system_prompt", signal)

        async def session_prefix(prefix: list[ConversationItem], signal: TurnSignal) -> None:
            self.hit("session_prefix", signal)

        async def pre_step(info: StepInfo, signal: TurnSignal) -> None:
            self.hit("pre_step", signal)

        async def request_config(request: ModelRequest, signal: TurnSignal) -> ModelRequest:
            self.hit("request_config", signal)
            return request

        async def step_result(result: StepResult, signal: TurnSignal) -> None:
            self.hit("step_result", signal)

        async def approval(call: ToolCallRequest, signal: TurnSignal) -> Deny | None:
            self.hit("approval", signal)
            return None

        async def post_tool(call: ToolCallRequest, output: ToolOutput, signal: TurnSignal) -> None:
            self.hit("post_tool", signal)

        async def continuation(progress: TurnProgress, signal: TurnSignal) -> None:
            self.hit("continuation", signal)

        async def turn_stop(progress: TurnProgress, signal: TurnSignal) -> None:
            self.hit("turn_stop", signal)

        seams.prompt_submit.append(prompt_submit)
        seams.system_prompt.append(system_prompt)
        seams.session_prefix.append(session_prefix)
        seams.pre_step.append(pre_step)
        seams.request_config.append(request_config)
        seams.step_result.append(step_result)
        seams.approval.append(approval)
        seams.post_tool.append(post_tool)
        seams.continuation.append(continuation)
        seams.turn_stop.append(turn_stop)
        return seams


class FakeModel:
    """A ModelProvider double: each request plays the next scripted response, then `default`.

    A response item is either a model event (yielded) or an async action
    `(request, signal) -> object` that is awaited in place; an action returning `END_STREAM`
    ends the stream there.
    """

    name = "fake"

    def __init__(
        self,
        *responses: Response,
        default: Response = DEFAULT_RESPONSE,
        trace: Trace | None = None,
    ) -> None:
        self._responses = list(responses)
        self._default = default
        self._trace = trace
        self.requests: list[ModelRequest] = []
        self.signals: list[TurnSignal] = []

    async def stream(
        self, request: ModelRequest, signal: TurnSignal
    ) -> AsyncGenerator[ModelEvent, None]:
        self.requests.append(request)
        self.signals.append(signal)
        if self._trace is not None:
            self._trace.hit("model_stream", signal)
        response = self._responses.pop(0) if self._responses else self._default
        for item in response:
            if callable(item):
                if await item(request, signal) is END_STREAM:
                    return
            else:
                yield item


ToolBehaviour = Callable[[Mapping[str, Any], TurnSignal], Awaitable[ToolOutput]]


class FakeTool:
    """A Tool double; `behaviour` decides what a call does (default: returns "ok")."""

    def __init__(
        self,
        name: str = "probe",
        behaviour: ToolBehaviour | None = None,
        *,
        trace: Trace | None = None,
        kind: ToolKind = "other",
    ) -> None:
        self.name = name
        self.description = f"the {name} test tool"
        self.parameters: Mapping[str, Any] = {"type": "object"}
        self.kind: ToolKind = kind
        self._behaviour = behaviour
        self._trace = trace
        self.runs: list[dict[str, Any]] = []
        self.finished: list[dict[str, Any]] = []

    def locations(self, arguments: Mapping[str, Any]) -> list[Any]:
        return []

    def title(self, arguments: Mapping[str, Any]) -> str:
        return f"{self.name} call"

    async def run(
        self, arguments: Mapping[str, Any], call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        self.runs.append(dict(arguments))
        if self._trace is not None:
            self._trace.hit("tool", signal)
        output = (
            ToolOutput("ok")
            if self._behaviour is None
            else await self._behaviour(arguments, signal)
        )
        self.finished.append(dict(arguments))
        return output


class WindowedModel(FakeModel):
    """A model double whose context window is `window` tokens (from the config)."""

    def __init__(self, window: int) -> None:
        super().__init__()
        self.window = window

    async def context_window(self, signal: TurnSignal) -> ContextWindow:
        return ContextWindow(self.window, "config", "test")


def make_handle(
    tg: TaskGroup,
    model: FakeModel,
    *,
    tools: Sequence[FakeTool] = (),
    seams: Seams | None = None,
    max_steps: int = 25,
    flush: Callable[[], Awaitable[None]] | None = None,
    session_id: str = "s1",
) -> AgentHandle:
    counter = itertools.count(1)
    return spawn_agent(
        SessionLog(session_id),
        AgentConfig(model=model, tools=list(tools), max_steps=max_steps),
        tg,
        seams=seams if seams is not None else Seams(),
        ids=lambda prefix: f"{prefix}_{next(counter)}",
        durability_flush=flush,
    )


@asynccontextmanager
async def running_agent(
    model: FakeModel,
    *,
    tools: Sequence[FakeTool] = (),
    seams: Seams | None = None,
    max_steps: int = 25,
    flush: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[AgentHandle]:
    """An agent in its own task group, disposed on the way out; the whole block has a deadline
    so a hang fails the test."""
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = make_handle(
                tg, model, tools=tools, seams=seams, max_steps=max_steps, flush=flush
            )
            try:
                yield handle
            finally:
                await handle.dispose()


# --- record helpers --------------------------------------------------------------------------


def kinds(session: SessionLog) -> list[str]:
    """The `type` tag of every record, in order."""
    return [str(type(r).__struct_config__.tag) for r in session.records]


def of_type(session: SessionLog, cls: type[Any]) -> list[Any]:
    return [r for r in session.records if isinstance(r, cls)]


def turn_ends(session: SessionLog) -> list[rec.TurnEndRecord]:
    return of_type(session, rec.TurnEndRecord)


def user_texts(session: SessionLog, origin: str | None = None) -> list[str]:
    """The text of each user message (optionally of one origin), in order."""
    return [
        "".join(p.text for p in r.content if isinstance(p, rec.TextPart))
        for r in of_type(session, rec.UserMessage)
        if origin is None or r.origin == origin
    ]


def request_user_texts(request: ModelRequest) -> list[str]:
    """The user messages a model request carried."""
    return [
        "".join(p.text for p in item.parts if isinstance(p, ModelTextPart))
        for item in request.messages
        if isinstance(item, UserMessage)
    ]


# --- blocking doubles ------------------------------------------------------------------------


async def hold(release: anyio.Event) -> None:
    """Wait for `release`, but never past DEADLINE.

    For doubles that block inside a turn's close (the durability flush, a `turn/end` sink):
    the close runs shielded, so the harness's deadline cannot end it, and a runtime broken in
    a way that leaves `release` unset would hang the suite instead of failing the test. This
    guard is not shielded: it ends the wait itself, the turn closes, and the test fails.
    """
    with anyio.move_on_after(DEADLINE):
        await release.wait()


# --- model actions ---------------------------------------------------------------------------


def gate(entered: anyio.Event, release: anyio.Event) -> Action:
    """An uncooperative pause: announces itself, then waits for `release`, ignoring the signal."""

    async def action(request: ModelRequest, signal: TurnSignal) -> object:
        entered.set()
        await release.wait()
        return None

    return action


def gated_model() -> tuple[FakeModel, anyio.Event, anyio.Event]:
    """A model double whose first response is a `gate`: (model, entered, release)."""
    entered, release = anyio.Event(), anyio.Event()
    return FakeModel([gate(entered, release)]), entered, release


def wait_for_abort(entered: anyio.Event, *, end: bool = False) -> Action:
    """A cooperative pause: announces itself, waits for the signal, raises `TurnAborted`
    (or, with `end=True`, ends the stream quietly)."""

    async def action(request: ModelRequest, signal: TurnSignal) -> object:
        entered.set()
        await signal.wait()
        if end:
            return END_STREAM
        signal.raise_if_aborted()
        return None

    return action


def waiting_tool(entered: anyio.Event) -> ToolBehaviour:
    """A tool behaviour that waits cooperatively on the signal and then raises."""

    async def behaviour(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        entered.set()
        await signal.wait()
        signal.raise_if_aborted()
        return ToolOutput("unreachable")

    return behaviour


def gated_tool(entered: anyio.Event, release: anyio.Event) -> ToolBehaviour:
    """A tool behaviour that ignores the signal until `release` is set, then returns."""

    async def behaviour(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        entered.set()
        await release.wait()
        return ToolOutput("finished anyway")

    return behaviour
