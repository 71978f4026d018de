"""The sessions a connection knows, by id."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_server.agent import Agent, AgentHandle, ClientPrompt
    from acp_server.cancellation import TurnCancellation
    from acp_server.models.switchable import SwitchableModel
    from acp_server.session.journal import Journal
    from acp_server.session.log import SessionLog
    from acp_server.tools.permissions import PermissionPolicy
    from acp_server.tools.toolbox import Toolbox

    from .presenter import SessionView


@dataclass
class AcpSession:
    """One ACP session as the bridge sees it: where it works and the agent that runs it."""

    id: str
    cwd: str
    handle: AgentHandle | None
    log: SessionLog
    journal: Journal | None
    toolbox: Toolbox
    policy: PermissionPolicy
    additional_directories: list[str] = field(default_factory=list)
    mcp_servers: list[Any] = field(default_factory=list)
    title: str | None = None
    model: SwitchableModel | None = None
    model_fallback: str | None = None
    """Why the session's model is not the one it last chose (told when it is reopened)."""
    mode_fallback: str | None = None
    """Why the session is not in the mode it was to start in (sandboxed mode unavailable
    here); the client is told once the session exists."""
    client_prompt: ClientPrompt | None = None
    """The client's `systemPrompt` in the model's system message (restored from the journal)."""
    view: SessionView | None = None
    """How the session is shown on the connection's wire (its presenter's view)."""
    rewind: TurnCancellation | None = None
    """The rewind running now (acp/rewind.py), which `session/cancel` stops; prompts are
    refused meanwhile."""

    @property
    def agent(self) -> Agent | None:
        """The session's agent; None when no model is configured."""
        return self.handle.agent if self.handle is not None else None


class SessionRegistry:
    """Sessions by id."""

    def __init__(self) -> None:
        self._sessions: dict[str, AcpSession] = {}

    def add(self, session: AcpSession) -> None:
        """Register a session under its id."""
        self._sessions[session.id] = session

    def get(self, session_id: str) -> AcpSession | None:
        """The session with this id, if any."""
        return self._sessions.get(session_id)

    def remove(self, session_id: str) -> AcpSession | None:
        """Forget a session; returns it if it was known."""
        return self._sessions.pop(session_id, None)

    def __iter__(self) -> Iterator[AcpSession]:
        return iter(list(self._sessions.values()))

    def __len__(self) -> int:
        return len(self._sessions)
