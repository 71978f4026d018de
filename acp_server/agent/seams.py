"""The typed extension points of a turn.

Every listener receives the turn's signal as its last parameter. A listener may cooperate with
it (check it, wait on it, hand it to I/O) but must not keep it: the next turn has its own. The
loop checks the signal after every listener returns, so a cancel that arrived meanwhile stops
the turn there. Listeners are awaited, never raced: a listener that ignores the signal delays
the end of the turn, and `when_idle()` still waits for it (see
docs/rfc/rejected/simplification/2026-11-30-abandon-uncooperative-work.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from acp_server.cancellation import TurnSignal
from acp_server.models.base import ConversationItem, ModelRequest, ToolCallRequest
from acp_server.session.records import Part
from acp_server.tools.base import ToolOutput
from acp_server.verdicts import Block, Deny


@dataclass
class PromptSubmission:
    """A follow-up about to open a turn; listeners may rewrite it or add context."""

    content: list[Part]
    context: list[list[Part]] = field(default_factory=list)


@dataclass(frozen=True)
class StepInfo:
    """Which step of which turn is about to run."""

    turn_id: str
    step: int


@dataclass(frozen=True)
class StepResult:
    """What the model produced in one step."""

    turn_id: str
    step: int
    text: str
    tool_calls: list[ToolCallRequest]
    finish: str


@dataclass(frozen=True)
class TurnProgress:
    """The state of a turn when no further step is owed (continuation and turn stop)."""

    turn_id: str
    steps: int
    last_text: str


PromptSubmitListener = Callable[[PromptSubmission, TurnSignal], Awaitable[Block | None]]
SystemPromptListener = Callable[[list[str], TurnSignal], Awaitable[None]]
SessionPrefixListener = Callable[[list[ConversationItem], TurnSignal], Awaitable[None]]
PreStepListener = Callable[[StepInfo, TurnSignal], Awaitable[None]]
RequestConfigListener = Callable[[ModelRequest, TurnSignal], Awaitable[ModelRequest]]
StepResultListener = Callable[[StepResult, TurnSignal], Awaitable[None]]
ApprovalListener = Callable[[ToolCallRequest, TurnSignal], Awaitable[Deny | None]]
PostToolListener = Callable[[ToolCallRequest, ToolOutput, TurnSignal], Awaitable[None]]
ContinuationListener = Callable[[TurnProgress, TurnSignal], Awaitable[None]]
TurnStopListener = Callable[[TurnProgress, TurnSignal], Awaitable[None]]


@dataclass
class Seams:
    """Listeners per seam, called in registration order.

    The model stream and tool execution are seams too: the provider's `stream` and each tool's
    `run` receive the same signal.
    """

    prompt_submit: list[PromptSubmitListener] = field(default_factory=list)
    system_prompt: list[SystemPromptListener] = field(default_factory=list)
    session_prefix: list[SessionPrefixListener] = field(default_factory=list)
    pre_step: list[PreStepListener] = field(default_factory=list)
    request_config: list[RequestConfigListener] = field(default_factory=list)
    step_result: list[StepResultListener] = field(default_factory=list)
    approval: list[ApprovalListener] = field(default_factory=list)
    post_tool: list[PostToolListener] = field(default_factory=list)
    continuation: list[ContinuationListener] = field(default_factory=list)
    turn_stop: list[TurnStopListener] = field(default_factory=list)
