"""`task` children shown as child sessions, to a client that advertised
`clientCapabilities.subagents: {}` (ACP subagent sessions).

A child is announced with `subagent_update` on its parent session (title, description,
`running` state and the `cancel` capability) before anything else of it is sent; the parent's
`task` call then links it with `session` content, kept first in that call's content; the
child's own updates carry its session id; when its turn is over, `subagent_update` reports it
`idle` with its stop reason. `session/load` of the parent replays each child right after its
`task` call (announced `idle`, then its journaled history). `session/cancel` on a running
child's id stops only that child's work (acp/methods/prompts.py), with the cause argued in
docs/rfc/implemented/architecture/2026-12-01-client-cancel-of-a-child.md. A client that did
not opt in gets none of this: no observer is installed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from acp_protocol.initialize import ClientCapabilities
from acp_protocol.newer import NewerClientCapabilities, NewerSessionUpdate, SubagentCapabilities
from acp_protocol.session import StopReason
from acp_protocol.subagents import (
    IdleState,
    RunningState,
    SessionCancelCapabilities,
    SubagentSessionCapabilities,
    SubagentUpdate,
)
from acp_protocol.tool_call import ToolCall, ToolCallUpdate
from acp_server.agent import Agent, TicketResult
from acp_server.session import records as rec
from acp_server.session.call_ids import written_call_id
from acp_server.session.journal import JournalStore
from acp_server.session.journal_format import JournalError

from .context import BridgeContext
from .plans import PlanView, shows_plan_operations
from .replay import replay_updates
from .stop_reasons import stop_reason
from .updates import SessionUpdates, shows_compactions

log = logging.getLogger(__name__)

TITLE_LENGTH = 60


def shows_subagents(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised `clientCapabilities.subagents`."""
    return isinstance(capabilities, NewerClientCapabilities) and isinstance(
        capabilities.subagents, SubagentCapabilities
    )


def idle_reason(result: TicketResult | rec.Outcome | None) -> StopReason:
    """How a child's work ended, as the stop reason of its `idle` state: the prompt's table
    (acp/stop_reasons.py); `cancelled` when it never ran or failed (an error is told in the
    parent's call)."""
    reason = stop_reason(result) if result is not None else None
    return reason if reason is not None else "cancelled"


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
        await parent.send(
            SubagentUpdate(
                session_id=child.id,
                title=_title(description),
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


@dataclass(frozen=True)
class ChildHistory:
    """A finished child's session as its journal holds it."""

    session_id: str
    records: list[rec.Record]


def child_histories(
    store: JournalStore, parent_session_id: str, parent_records: Sequence[rec.Record]
) -> dict[str, ChildHistory]:
    """The journaled children of a session, by the id of the parent's `task` call that started
    each (`_pair_children`). A child journal that cannot be read (in use, damaged) is left out
    with a warning."""
    found: dict[str, list[_Child]] = {}
    for summary in store.list():
        if summary.parent_session_id != parent_session_id:
            continue
        try:
            loaded = store.open(summary.session_id)
        except JournalError as exc:
            log.warning("not replaying child session %s: %s", summary.session_id, exc)
            continue
        try:
            loaded.journal.close()
        except JournalError as exc:
            log.warning("closing child session %s failed: %s", summary.session_id, exc)
        call_id = loaded.header.parent_tool_call_id
        if call_id is not None:
            history = ChildHistory(summary.session_id, loaded.records)
            found.setdefault(call_id, []).append(_Child(loaded.header.created_at, history))
    return _pair_children(found, parent_records)


@dataclass(frozen=True)
class _Child:
    created_at: str
    history: ChildHistory

    def order(self) -> tuple[str, int]:
        """Creation order: the time, then the number of `<parent>.task<N>` (one millisecond
        may see several children start)."""
        number = self.history.session_id.rpartition(".task")[2]
        return self.created_at, int(number) if number.isdigit() else 0


def _pair_children(
    found: dict[str, list[_Child]], parent_records: Sequence[rec.Record]
) -> dict[str, ChildHistory]:
    """Each child by the parent's call that started it. A child journal names that call by the
    id it was written with; a journal written before the agent made its own ids may hold one
    id for several `task` calls (the model's `call_1` in every turn), which its load renamed
    `call_1`, `call_1~2`, ... (acp_server/session/call_ids.py), while their children all name
    `call_1`. So the children of one written id are paired with the `task` calls of that id in
    order, as they were created, skipping a call that had ended before the child was created
    (it started none: refused, or its arguments did not decode)."""
    calls: dict[str, list[tuple[str, str]]] = {}
    """Written id -> the `task` calls of that id, in order: (unique id, when it ended)."""
    ended = {r.call_id: r.at for r in parent_records if isinstance(r, rec.ToolResult)}
    for record in parent_records:
        if isinstance(record, rec.AssistantMessage):
            for call in record.tool_calls:
                if call.name == "task":
                    never = "\uffff"  # no result (a crash): later than any time
                    entry = (call.call_id, ended.get(call.call_id, never))
                    calls.setdefault(written_call_id(call), []).append(entry)
    paired: dict[str, ChildHistory] = {}
    for written, children in found.items():
        candidates = iter(calls.get(written, []))
        for child in sorted(children, key=_Child.order):
            for call_id, end in candidates:
                if end >= child.created_at:
                    paired[call_id] = child.history
                    break
    return paired


def _described(raw_input: Any) -> str:
    """A `task` call's description (or, lacking one, its prompt) from its input."""
    if isinstance(raw_input, dict):
        for key in ("description", "prompt"):
            value = raw_input.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return "task"


def _title(description: str) -> str:
    title = description.splitlines()[0] if description else "task"
    return title if len(title) <= TITLE_LENGTH else title[: TITLE_LENGTH - 3] + "..."


async def replay_with_children(
    context: BridgeContext,
    session_id: str,
    updates: Sequence[NewerSessionUpdate],
    children: dict[str, ChildHistory],
) -> None:
    """Send a session's replay, each `task` call followed by its child: announced (`idle`,
    with the stop reason of its last turn), then its own history under its id; the call's
    later updates link it with `session` content."""
    links: dict[str, str] = {}
    sender = SessionUpdates(context.peer, session_id, links=links)
    capabilities = context.client_capabilities
    for update in updates:
        await sender.send(update)
        if not isinstance(update, ToolCall) or update.tool_call_id not in children:
            continue
        child = children[update.tool_call_id]
        ends = [r.outcome for r in child.records if isinstance(r, rec.TurnEndRecord)]
        description = _described(update.raw_input)
        await sender.send(
            SubagentUpdate(
                session_id=child.session_id,
                title=_title(description),
                description=description,
                state=IdleState(stop_reason=idle_reason(ends[-1] if ends else None)),
            )
        )
        child_sender = SessionUpdates(context.peer, child.session_id)
        plans = PlanView(shows_plan_operations(capabilities))
        for shown in replay_updates(
            child.records, compaction=shows_compactions(capabilities), plans=plans
        ):
            await child_sender.send(shown)
        links[update.tool_call_id] = child.session_id
