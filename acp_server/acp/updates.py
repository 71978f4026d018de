"""Runtime events -> `session/update` notifications for one session."""

from __future__ import annotations

from acp_server.agent.events import (
    AgentEvent,
    MessageChunk,
    ThoughtChunk,
    ToolCallAnnounced,
    ToolCallProgress,
)
from acp_server.rpc.peer import Peer
from protocol.content import TextContent
from protocol.session_update import (
    AgentMessageChunk,
    AgentThoughtChunk,
    SessionNotification,
    SessionUpdate,
)
from protocol.tool_call import ContentToolCallContent, ToolCall, ToolCallUpdate

SESSION_UPDATE = "session/update"


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
            kind=event.kind,
            status="pending",
            raw_input=dict(event.arguments),
        )
    if isinstance(event, ToolCallProgress):
        if event.output is None:
            return ToolCallUpdate(tool_call_id=event.call_id, status=event.status)
        return ToolCallUpdate(
            tool_call_id=event.call_id,
            status=event.status,
            content=[ContentToolCallContent(content=TextContent(text=event.output))],
        )
    return None


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
