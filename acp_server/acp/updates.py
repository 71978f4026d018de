"""Runtime events -> `session/update` notifications for one session."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import UNSET

from acp_protocol.content import ImageContent, TextContent
from acp_protocol.initialize import (
    ClientCapabilities,
    ClientSessionCapabilities,
    CompactionCapabilities,
)
from acp_protocol.methods import SESSION_UPDATE
from acp_protocol.newer import (
    LinkingSessionNotification,
    NewerSessionNotification,
    NewerSessionUpdate,
)
from acp_protocol.plan_operations import PlanRemoved, PlanUpdate
from acp_protocol.session_update import (
    AgentMessageChunk,
    AgentThoughtChunk,
    CompactionUpdate,
    Plan,
    PlanEntry,
    SessionNotification,
    SessionUpdate,
    UsageUpdate,
)
from acp_protocol.subagents import LinkedToolCallUpdate, SessionToolCallContent, SubagentUpdate
from acp_protocol.tool_call import (
    ContentToolCallContent,
    DiffToolCallContent,
    TerminalToolCallContent,
    ToolCall,
    ToolCallContent,
    ToolCallLocation,
    ToolCallUpdate,
)
from acp_server.agent import (
    AgentEvent,
    CompactionEnded,
    CompactionStarted,
    MessageChunk,
    ModelWaiting,
    PlanUpdated,
    ThoughtChunk,
    ToolCallAnnounced,
    ToolCallDrafted,
    ToolCallProgress,
)
from acp_server.printable import one_line
from acp_server.rpc.peer import Peer
from acp_server.tools.base import Location

from .plans import PlanView

AGENT_ORIGIN = {"acp-server": {"origin": "agent"}}
"""`_meta` of a message chunk that is the agent's own notice, not the model's words."""


def update_for(event: AgentEvent) -> SessionUpdate | None:
    """The ACP update that shows `event`, or None for events the client does not see."""
    if isinstance(event, MessageChunk):
        if event.from_agent:
            return AgentMessageChunk(
                content=TextContent(text=event.text),
                message_id=event.message_id,
                meta=AGENT_ORIGIN,
            )
        return AgentMessageChunk(content=TextContent(text=event.text), message_id=event.message_id)
    if isinstance(event, ThoughtChunk):
        return AgentThoughtChunk(content=TextContent(text=event.text), message_id=event.message_id)
    if isinstance(event, ToolCallAnnounced) and event.drafted:
        return ToolCallUpdate(
            tool_call_id=event.call_id,
            title=one_line(event.title),
            kind=event.kind,
            status="pending",
            raw_input=dict(event.arguments),
            locations=[location_of(loc) for loc in event.locations] or UNSET,
        )
    if isinstance(event, ToolCallDrafted):
        raw = event.raw_input
        raw_input = UNSET if raw is None else raw if isinstance(raw, str) else dict(raw)
        if event.first:
            return ToolCall(
                tool_call_id=event.call_id,
                title=one_line(event.name),
                name=event.name,
                kind=event.kind,
                status="pending",
                raw_input=raw_input,
            )
        return ToolCallUpdate(tool_call_id=event.call_id, raw_input=raw_input)
    if isinstance(event, ModelWaiting):
        return UsageUpdate(
            used=event.used,
            size=event.window,
            meta={"acp-server": {"modelWaitingSeconds": event.seconds}},
        )
    if isinstance(event, ToolCallAnnounced):
        return ToolCall(
            tool_call_id=event.call_id,
            title=one_line(event.title),
            name=event.name,
            kind=event.kind,
            status="pending",
            raw_input=dict(event.arguments),
            locations=[location_of(loc) for loc in event.locations] or UNSET,
        )
    if isinstance(event, ToolCallProgress):
        # v1 has no `cancelled` tool call status: a call the turn's abort stopped failed.
        status = "failed" if event.status == "cancelled" else event.status
        if event.output is None and event.terminal_id is not None:
            return ToolCallUpdate(
                tool_call_id=event.call_id,
                status=status,
                content=[TerminalToolCallContent(terminal_id=event.terminal_id)],
            )
        if event.output is None:
            return ToolCallUpdate(tool_call_id=event.call_id, status=status)
        return ToolCallUpdate(
            tool_call_id=event.call_id,
            status=status,
            content=tool_content(
                event.output,
                [(d.path, d.old_text, d.new_text) for d in event.diffs],
                event.terminal_id,
                [(i.data, i.mime_type) for i in event.images],
            ),
            locations=[location_of(loc) for loc in event.locations] or UNSET,
        )
    if isinstance(event, PlanUpdated):
        return Plan(
            entries=[
                PlanEntry(content=e.content, priority=e.priority, status=e.status)
                for e in event.entries
            ]
        )  # a SessionUpdates sink shows it through its PlanView instead
    return None


def shows_compactions(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised `clientCapabilities.session.compaction`."""
    session = capabilities.session
    return isinstance(session, ClientSessionCapabilities) and isinstance(
        session.compaction, CompactionCapabilities
    )


TRIM_SUMMARY = "Old tool results were cut to one-line notes; the recent turns are verbatim."


def compaction_summary(summary: str | None) -> str:
    """What a compaction left the model with, as shown to the client."""
    return TRIM_SUMMARY if summary is None else summary


def compaction_updates(
    event: CompactionStarted | CompactionEnded, supported: bool
) -> list[SessionUpdate]:
    """The updates that show a compaction: `compaction_update` to a client that advertised
    `session.compaction`, else one short thought once it completed (nothing that could break
    a client that does not know compactions); then the new size as `usage_update`."""
    if isinstance(event, CompactionStarted):
        if not supported:
            return []
        return [CompactionUpdate(compaction_id=event.compaction_id, status="in_progress")]
    updates: list[SessionUpdate] = []
    if supported:
        updates.append(
            CompactionUpdate(
                compaction_id=event.compaction_id,
                status=event.status,
                summary=[TextContent(text=compaction_summary(event.summary))]
                if event.status == "completed"
                else UNSET,
                error=event.error if event.error is not None else UNSET,
            )
        )
    elif event.status == "completed":
        updates.append(
            AgentThoughtChunk(
                content=TextContent(
                    text=f"(Compacted the conversation to ~{event.tokens} tokens.)"
                ),
                message_id=event.compaction_id,
            )
        )
    if event.status == "completed" and event.tokens is not None and event.window is not None:
        updates.append(UsageUpdate(used=event.tokens, size=event.window))
    return updates


def tool_content(
    output: str,
    diffs: list[tuple[str, str | None, str]],
    terminal_id: str | None,
    images: Sequence[tuple[str, str]] = (),
) -> list[ToolCallContent]:
    """What a finished tool call shows: its diffs, its live terminal, its text output, then
    its images (`(base64 data, MIME type)` pairs) as `image` content blocks."""
    content: list[ToolCallContent] = [
        DiffToolCallContent(path=path, old_text=old, new_text=new) for path, old, new in diffs
    ]
    if terminal_id is not None:
        content.append(TerminalToolCallContent(terminal_id=terminal_id))
    content.append(ContentToolCallContent(content=TextContent(text=output)))
    content.extend(
        ContentToolCallContent(content=ImageContent(data=data, mime_type=mime))
        for data, mime in images
    )
    return content


def location_of(location: Location) -> ToolCallLocation:
    """A tool's location as ACP shows it (the same in v1 and v2)."""
    if location.line is None:
        return ToolCallLocation(path=location.path)
    return ToolCallLocation(path=location.path, line=location.line)


ANNOUNCED_INPUTS = 64
"""Inputs of announced calls kept for permission requests; a cancelled turn's calls never end,
so the oldest go first."""


def _note_input(announced: dict[str, Mapping[str, Any]], event: AgentEvent) -> None:
    """Keep the input of each announced tool call until it ends (for permission requests)."""
    if isinstance(event, ToolCallAnnounced):
        announced[event.call_id] = event.arguments
        while len(announced) > ANNOUNCED_INPUTS:
            del announced[next(iter(announced))]
    elif isinstance(event, ToolCallProgress) and event.status != "in_progress":
        announced.pop(event.call_id, None)


class SessionUpdates:
    """An agent event sink that writes the session's updates through the peer's ordered
    writer, so every update of a turn is queued before that turn's prompt response."""

    def __init__(
        self,
        peer: Peer,
        session_id: str,
        *,
        compaction: bool = False,
        plans: PlanView | None = None,
        announced: dict[str, Mapping[str, Any]] | None = None,
        links: dict[str, str] | None = None,
    ) -> None:
        self._peer = peer
        self._session_id = session_id
        self._compaction = compaction
        self._plans = plans if plans is not None else PlanView(operations=False)
        self._announced = announced
        self._links = links if links is not None else {}
        """Tool call id -> the child session it links (its content starts with the link)."""

    async def __call__(self, event: AgentEvent) -> None:
        if self._announced is not None:
            _note_input(self._announced, event)
        if isinstance(event, (CompactionStarted, CompactionEnded)):
            for shown in compaction_updates(event, self._compaction):
                await self.send(shown)
            return
        if isinstance(event, PlanUpdated):
            plan = self._plans.update([(e.content, e.priority, e.status) for e in event.entries])
            if plan is not None:
                await self.send(plan)
            return
        update = update_for(event)
        if update is not None:
            await self.send(update)

    async def send(self, update: NewerSessionUpdate) -> None:
        """Send one update for this session."""
        notification: SessionNotification | NewerSessionNotification | LinkingSessionNotification
        if isinstance(update, (PlanUpdate, PlanRemoved, SubagentUpdate)):
            notification = NewerSessionNotification(session_id=self._session_id, update=update)
        elif (
            isinstance(update, ToolCallUpdate)
            and update.tool_call_id in self._links
            and isinstance(update.content, list)
        ):
            notification = LinkingSessionNotification(
                session_id=self._session_id,
                update=linked(update, self._links[update.tool_call_id], update.content),
            )
        else:
            notification = SessionNotification(session_id=self._session_id, update=update)
        await self._peer.notify(SESSION_UPDATE, notification)


def linked(
    update: ToolCallUpdate, child_session_id: str, content: list[ToolCallContent]
) -> LinkedToolCallUpdate:
    """`update` of a `task` call with its child's `session` link first in its content (a
    content list replaces the previous one, so every content-bearing update keeps the link)."""
    return LinkedToolCallUpdate(
        tool_call_id=update.tool_call_id,
        status=update.status,
        content=[SessionToolCallContent(session_id=child_session_id), *content],
        locations=update.locations,
    )
