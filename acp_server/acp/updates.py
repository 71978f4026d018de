"""Runtime events -> `session/update` notifications for one session."""

from __future__ import annotations

from msgspec import UNSET

from acp_protocol.content import TextContent
from acp_protocol.methods import SESSION_UPDATE
from acp_protocol.session_update import (
    AgentMessageChunk,
    AgentThoughtChunk,
    Plan,
    PlanEntry,
    SessionNotification,
    SessionUpdate,
)
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
    MessageChunk,
    PlanUpdated,
    ThoughtChunk,
    ToolCallAnnounced,
    ToolCallProgress,
)
from acp_server.rpc.peer import Peer
from acp_server.tools.base import Location


def update_for(event: AgentEvent) -> SessionUpdate | None:
    """The ACP update that shows `event`, or None for events the client does not see."""
    if isinstance(event, MessageChunk):
        return AgentMessageChunk(content=TextContent(text=event.text), message_id=event.message_id)
    if isinstance(event, ThoughtChunk):
        return AgentThoughtChunk(content=TextContent(text=event.text), message_id=event.message_id)
    if isinstance(event, ToolCallAnnounced):
        return ToolCall(
            tool_call_id=event.call_id,
            title=event.title,
            name=event.name,
            kind=event.kind,
            status="pending",
            raw_input=dict(event.arguments),
            locations=[_location(loc) for loc in event.locations] or UNSET,
        )
    if isinstance(event, ToolCallProgress):
        if event.output is None and event.terminal_id is not None:
            return ToolCallUpdate(
                tool_call_id=event.call_id,
                status=event.status,
                content=[TerminalToolCallContent(terminal_id=event.terminal_id)],
            )
        if event.output is None:
            return ToolCallUpdate(tool_call_id=event.call_id, status=event.status)
        return ToolCallUpdate(
            tool_call_id=event.call_id,
            status=event.status,
            content=tool_content(
                event.output,
                [(d.path, d.old_text, d.new_text) for d in event.diffs],
                event.terminal_id,
            ),
            locations=[_location(loc) for loc in event.locations] or UNSET,
        )
    if isinstance(event, PlanUpdated):
        return Plan(
            entries=[
                PlanEntry(content=e.content, priority=e.priority, status=e.status)
                for e in event.entries
            ]
        )
    return None


def tool_content(
    output: str, diffs: list[tuple[str, str | None, str]], terminal_id: str | None
) -> list[ToolCallContent]:
    """What a finished tool call shows: its diffs, its live terminal, then its text output."""
    content: list[ToolCallContent] = [
        DiffToolCallContent(path=path, old_text=old, new_text=new) for path, old, new in diffs
    ]
    if terminal_id is not None:
        content.append(TerminalToolCallContent(terminal_id=terminal_id))
    content.append(ContentToolCallContent(content=TextContent(text=output)))
    return content


def _location(location: Location) -> ToolCallLocation:
    if location.line is None:
        return ToolCallLocation(path=location.path)
    return ToolCallLocation(path=location.path, line=location.line)


class SessionUpdates:
    """An agent event sink that writes the session's updates through the peer's ordered
    writer, so every update of a turn is queued before that turn's prompt response."""

    def __init__(self, peer: Peer, session_id: str) -> None:
        self._peer = peer
        self._session_id = session_id

    async def __call__(self, event: AgentEvent) -> None:
        update = update_for(event)
        if update is not None:
            await self.send(update)

    async def send(self, update: SessionUpdate) -> None:
        """Send one update for this session."""
        await self._peer.notify(
            SESSION_UPDATE, SessionNotification(session_id=self._session_id, update=update)
        )
