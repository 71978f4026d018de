"""`task` children shown as child sessions, to a client that advertised
`clientCapabilities.subagents: {}` (ACP subagent sessions).

A child is announced with `subagent_update` on its parent session (title, description,
`running` state and the `cancel` capability) before anything else of it is sent; the parent's
`task` call then links it with `session` content, kept first in that call's content; the
child's own updates carry its session id; when its turn is over, `subagent_update` reports it
`idle` with its stop reason. `session/cancel` on a running child's id stops only that child's
work (acp_server/acp/prompting.py), with the cause argued in
docs/rfc/implemented/architecture/2026-12-01-client-cancel-of-a-child.md. A client that did
not opt in gets none of this: no observer is installed.
"""

from __future__ import annotations

from acp_protocol.initialize import ClientCapabilities
from acp_protocol.newer import NewerClientCapabilities, SubagentCapabilities
from acp_protocol.session import StopReason
from acp_protocol.subagents import (
    IdleState,
    RunningState,
    SessionCancelCapabilities,
    SubagentSessionCapabilities,
    SubagentUpdate,
)
from acp_protocol.tool_call import ToolCallUpdate
from acp_server.agent import Agent, Blocked, TicketResult
from acp_server.session import records as rec

from .context import BridgeContext
from .plans import PlanView, shows_plan_operations
from .updates import SessionUpdates, shows_compactions

TITLE_LENGTH = 60


def shows_subagents(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised `clientCapabilities.subagents`."""
    return isinstance(capabilities, NewerClientCapabilities) and isinstance(
        capabilities.subagents, SubagentCapabilities
    )


def idle_reason(result: TicketResult | None) -> StopReason:
    """How a child's work ended, as the stop reason of its `idle` state."""
    if isinstance(result, rec.Completed):
        return "end_turn"
    if isinstance(result, rec.MaxTokens):
        return "max_tokens"
    if isinstance(result, rec.MaxTurnRequests):
        return "max_turn_requests"
    if isinstance(result, (rec.Refusal, Blocked)):
        return "refusal"
    return "cancelled"  # aborted, disposed, never ran; an error is told in the parent's call


class ChildSessions:
    """The `task` tool's `ChildObserver` for one client session and all its descendants."""

    def __init__(self, context: BridgeContext) -> None:
        self._context = context
        self._links: dict[str, dict[str, str]] = {}
        """Session id -> (tool call id -> linked child session id)."""
        self._parents: dict[str, str] = {}

    def links_of(self, session_id: str) -> dict[str, str]:
        """The links of `session_id`'s tool calls (shared with its `SessionUpdates`)."""
        return self._links.setdefault(session_id, {})

    async def started(
        self, child: Agent, parent_session_id: str, call_id: str, description: str
    ) -> None:
        context = self._context
        parent = SessionUpdates(
            context.peer, parent_session_id, links=self.links_of(parent_session_id)
        )
        title = description.splitlines()[0] if description else "task"
        if len(title) > TITLE_LENGTH:
            title = title[: TITLE_LENGTH - 3] + "..."
        await parent.send(
            SubagentUpdate(
                session_id=child.id,
                title=title,
                description=description,
                capabilities=SubagentSessionCapabilities(cancel=SessionCancelCapabilities()),
                state=RunningState(),
            )
        )
        self.links_of(parent_session_id)[call_id] = child.id
        await parent.send(ToolCallUpdate(tool_call_id=call_id, status="in_progress", content=[]))
        capabilities = context.client_capabilities
        child.subscribe(
            SessionUpdates(
                context.peer,
                child.id,
                compaction=shows_compactions(capabilities),
                plans=PlanView(shows_plan_operations(capabilities)),
                links=self.links_of(child.id),
            )
        )
        self._parents[child.id] = parent_session_id
        context.children[child.id] = child

    async def ended(self, child: Agent, result: TicketResult | None) -> None:
        self._context.children.pop(child.id, None)
        parent_session_id = self._parents.pop(child.id, None)
        if parent_session_id is None:
            return
        await SessionUpdates(self._context.peer, parent_session_id).send(
            SubagentUpdate(session_id=child.id, state=IdleState(stop_reason=idle_reason(result)))
        )
