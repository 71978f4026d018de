"""What an agent tells its observers while it works. Process-local; never made durable."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from acp_server.models.base import Usage
from acp_server.session.records import Outcome, Part
from acp_server.tools.base import Diff, ImageData, Location, PlanItem, ProcessExit, ToolKind

from .inbox import TicketResult

Status = Literal["idle", "running", "disposed"]


@dataclass(frozen=True)
class MessageChunk:
    """One streamed piece of assistant text (`turn_id` None: a `/compact` report).
    `from_agent`: the agent's own words (a stopped turn, a recognised text tool call), not the
    model's."""

    turn_id: str | None
    message_id: str
    text: str
    from_agent: bool = False


@dataclass(frozen=True)
class ThoughtChunk:
    """One streamed piece of model reasoning."""

    turn_id: str
    message_id: str
    text: str


@dataclass(frozen=True)
class ToolCallAnnounced:
    """The model asked for a tool call; it has not started yet. `drafted`: the call was
    already shown while the model wrote it (`ToolCallDrafted`), so this completes that
    announcement instead of making a new one."""

    turn_id: str
    call_id: str
    name: str
    title: str
    kind: ToolKind
    arguments: Mapping[str, Any]
    locations: tuple[Location, ...] = ()
    drafted: bool = False


@dataclass(frozen=True)
class ToolCallDrafted:
    """The model is writing a tool call: its name is known, `raw_input` is the argument text
    so far (an API call), or what parses of its arguments so far (a call written as text; None:
    nothing yet) (`first`: the call's first draft, which announces it)."""

    turn_id: str
    call_id: str
    name: str
    kind: ToolKind
    raw_input: str | Mapping[str, Any] | None
    first: bool


@dataclass(frozen=True)
class ModelWaiting:
    """A model request has streamed nothing for a while: it is still running (prefill, or a
    long generation the provider does not stream). `used`/`window`: the request's estimated
    size and the context window."""

    turn_id: str
    seconds: float
    used: int
    window: int


@dataclass(frozen=True)
class ToolCallProgress:
    """A tool call started, or ended with its output. `cancelled`: the turn's abort stopped it
    while it ran (its journaled result is a failed one); `process_exit`: how the command it ran
    ended, for a command tool."""

    turn_id: str
    call_id: str
    status: Literal["in_progress", "completed", "failed", "cancelled"]
    output: str | None = None
    diffs: tuple[Diff, ...] = ()
    locations: tuple[Location, ...] = ()
    terminal_id: str | None = None
    images: tuple[ImageData, ...] = ()
    process_exit: ProcessExit | None = None


@dataclass(frozen=True)
class PlanUpdated:
    """The agent replaced its plan (the complete list)."""

    turn_id: str
    entries: tuple[PlanItem, ...]


@dataclass(frozen=True)
class TurnEnded:
    """A turn ended; published right after its `turn/end` record."""

    turn_id: str
    outcome: Outcome


@dataclass(frozen=True)
class TurnStarting:
    """A queued follow-up was claimed: its turn starts now, before prompt submission (which may
    still block it). Every turn that starts is settled (`TurnSettled`), through the same sinks."""

    turn_id: str


@dataclass(frozen=True)
class UserMessageRecorded:
    """The follow-up's prompt is in the conversation: recorded as the user message
    `message_id` (the turn's own prompt; context and steering the agent adds are not told)."""

    turn_id: str
    message_id: str
    content: tuple[Part, ...]


@dataclass(frozen=True)
class TurnSettled:
    """A started turn is over and its records are durable (or `not_saved` says why not), right
    before its ticket resolves: the last event of the turn, and the next turn starts after it.

    `result` is the ticket's (`Blocked` when prompt submission refused it, so nothing was
    recorded); `error_detail` the redacted text an `error` outcome leaves out; `usage` the
    turn's tokens summed over its model requests, `last_usage` its last request's, and `window`
    the context window they are measured against."""

    turn_id: str
    result: TicketResult
    error_detail: str | None
    not_saved: Exception | None
    usage: Usage | None
    last_usage: Usage | None
    window: int


@dataclass(frozen=True)
class CompactionStarted:
    """A compaction began (its summary request, if any, is under way). `turn_id` is None for
    a compaction asked for by `Agent.compact`, which runs outside any turn record."""

    turn_id: str | None
    compaction_id: str


@dataclass(frozen=True)
class CompactionEnded:
    """A compaction ended. `summary` is what the model now sees in place of the compacted part
    (None when only old tool results were cut to stubs); `tokens`/`window` give the estimated
    size of the compacted conversation (None unless `completed`)."""

    turn_id: str | None
    compaction_id: str
    status: Literal["completed", "failed", "cancelled"]
    summary: str | None
    error: str | None
    tokens: int | None
    window: int | None


AgentEvent = (
    MessageChunk
    | ThoughtChunk
    | ToolCallAnnounced
    | ToolCallDrafted
    | ModelWaiting
    | ToolCallProgress
    | PlanUpdated
    | TurnEnded
    | TurnStarting
    | UserMessageRecorded
    | TurnSettled
    | CompactionStarted
    | CompactionEnded
)
