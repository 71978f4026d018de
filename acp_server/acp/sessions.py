"""The sessions a connection knows, by id."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


@dataclass
class AcpSession:
    """One ACP session as the bridge sees it."""

    id: str
    cwd: str
    additional_directories: list[str] = field(default_factory=list)
    mcp_servers: list[Any] = field(default_factory=list)


class SessionRegistry:
    """Creates sessions with unique ids and finds them again."""

    def __init__(self) -> None:
        self._sessions: dict[str, AcpSession] = {}

    def create(
        self, *, cwd: str, additional_directories: list[str], mcp_servers: list[Any]
    ) -> AcpSession:
        """A new session with a fresh, unguessable id."""
        session_id = "sess_" + os.urandom(12).hex()
        session = AcpSession(session_id, cwd, additional_directories, mcp_servers)
        self._sessions[session_id] = session
        return session

    def get(self, session_id: str) -> AcpSession | None:
        """The session with this id, if any."""
        return self._sessions.get(session_id)

    def clear(self) -> None:
        """Forget every session."""
        self._sessions.clear()

    def __len__(self) -> int:
        return len(self._sessions)
