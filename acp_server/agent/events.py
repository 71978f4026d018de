"""What an agent tells its observers while it works. Process-local; never made durable."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from acp_server.session.records import Outcome
from acp_server.tools.base import Diff, ImageData, Location, PlanItem, ToolKind

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
    """A tool call started, or ended with its output."""

    turn_id: str
    call_id: str
    status: Literal["in_progress", "completed", "failed"]
    output: str | None = None
    diffs: tuple[Diff, ...] = ()
    locations: tuple[Location, ...] = ()
    terminal_id: str | None = None
    images: tuple[ImageData, ...] = ()


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
    | CompactionStarted
    | CompactionEnded
)
