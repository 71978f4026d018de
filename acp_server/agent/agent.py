"""The public face of the runtime: `Agent` (used by anyone) and `AgentHandle` (its owner).

The delivery verbs are `followup`, `steer` and `inject`; the one stop verb is `cancel`;
`when_idle` observes quiescence. `dispose` exists only on the handle, so only the owner can end
an agent's life. There is no step-only abort. See
docs/rfc/implemented/simplification/2026-11-30-one-public-stop-primitive.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from anyio.abc import TaskGroup

from acp_server.cancellation import CancelCause, UserCancel
from acp_server.ids import IdFactory, random_ids
from acp_server.models.base import Usage
from acp_server.models.budget import ContextBudget
from acp_server.session.log import SessionLog
from acp_server.session.records import Part
from acp_server.tools.base import Tool

from .events import Status
from .inbox import PromptTicket
from .loop import AgentConfig, AgentLoop, EventSink
from .seams import Seams

_USER = UserCancel()


class Agent:
    """One conversation's runtime."""

    def __init__(
        self,
        session: SessionLog,
        config: AgentConfig,
        task_group: TaskGroup,
        *,
        seams: Seams | None = None,
        ids: IdFactory = random_ids,
        durability_flush: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._loop = AgentLoop(session, config, seams or Seams(), task_group, ids, durability_flush)

    @property
    def id(self) -> str:
        """The id of the session this agent runs."""
        return self._loop.session.session_id

    @property
    def session(self) -> SessionLog:
        """The session log (records of every turn)."""
        return self._loop.session

    @property
    def status(self) -> Status:
        """`idle`, `running` (turns being driven) or `disposed`."""
        return self._loop.status

    @property
    def config(self) -> AgentConfig:
        """What this agent works with."""
        return self._loop.config

    @property
    def seams(self) -> Seams:
        """The listeners of this agent's turn seams."""
        return self._loop.seams

    def followup(self, content: list[Part]) -> PromptTicket:
        """Queue a prompt as its own turn (FIFO); the ticket resolves with that turn's end."""
        return self._loop.followup(content)

    def compact(self, instructions: str | None = None) -> PromptTicket:
        """Queue a compaction of the conversation as a turn of its own (FIFO, like a
        follow-up, and cancelled like one); `instructions` guide the summary."""
        return self._loop.compact(instructions)

    def steer(self, content: list[Part]) -> None:
        """Add input for the next step of the open turn (or a new turn when none is open)."""
        self._loop.steer(content)

    def inject(self, content: list[Part]) -> None:
        """Add context at the next safe point; never starts the model by itself."""
        self._loop.inject(content)

    def cancel(self, cause: CancelCause = _USER, *, keep_inbox: bool = False) -> None:
        """Stop the running turn and, unless `keep_inbox`, everything queued behind it (steering
        staged for the stopped turn never outlives it)."""
        self._loop.cancel(cause, keep_inbox=keep_inbox)

    async def when_idle(self) -> None:
        """Return once nothing runs and nothing claimable is queued."""
        await self._loop.when_idle()

    def add_tools(self, tools: Sequence[Tool]) -> None:
        """Offer more tools from the next model request on (e.g. an MCP server that finished
        connecting after the session started); a request in flight keeps what it had."""
        self._loop.add_tools(tools)

    def subscribe(self, sink: EventSink) -> None:
        """Receive stream events (chunks, tool calls, turn ends); awaited in order."""
        self._loop.sinks.append(sink)

    def on_status(self, listener: Callable[[Status], None]) -> None:
        """Hear status changes, synchronously."""
        self._loop.status_listeners.append(listener)

    def on_cancel_requested(self, listener: Callable[[CancelCause], None]) -> None:
        """Hear an effective cancel before anything is cleared or aborted (observe only)."""
        self._loop.cancel_listeners.append(listener)

    @property
    def last_usage(self) -> Usage | None:
        """Token usage reported by the model for the latest step, if any."""
        return self._loop.last_usage

    @property
    def context_budget(self) -> ContextBudget:
        """The model's context window and the size estimates of this agent's requests."""
        return self._loop.budget


class AgentHandle:
    """The owner's grip on an agent: the agent plus the right to dispose it."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    async def dispose(self) -> None:
        """End the agent: the running turn ends `disposed`, queued work is dropped, and this
        returns once the agent is quiescent. Idempotent; concurrent callers share the wait."""
        await self.agent._loop.dispose()


def spawn_agent(
    session: SessionLog,
    config: AgentConfig,
    task_group: TaskGroup,
    *,
    seams: Seams | None = None,
    ids: IdFactory = random_ids,
    durability_flush: Callable[[], Awaitable[None]] | None = None,
) -> AgentHandle:
    """Create an agent whose turns run in `task_group`; the caller owns the handle."""
    agent = Agent(
        session, config, task_group, seams=seams, ids=ids, durability_flush=durability_flush
    )
    return AgentHandle(agent)
