"""The v1 presenter (acp/presenter.py's `Presenter`): the updates of ACP v1's stable schema, and
the opt-ins the client advertised (notices, compactions, plan operations, child sessions). Its
output is byte for byte what v1 sent before the presenter existed. The connection's presenter
until `initialize` chooses v2. Light: the runtime half (`session_view`) is acp/v1_view.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from acp_protocol.content import TextContent
from acp_protocol.session_config import SessionConfigOption
from acp_protocol.session_update import (
    AgentMessageChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Notice,
    NoticeSeverity,
    SessionInfoUpdate,
)

from .notices import shows_notices
from .update_sender import send_update

if TYPE_CHECKING:
    from acp_server.session import records as rec

    from .context import BridgeContext
    from .presenter import SessionView

__all__ = ["V1Presenter"]


class V1Presenter:
    """ACP v1: the updates of the stable schema, and the opt-ins the client advertised
    (notices, compactions, plan operations, child sessions)."""

    version: Literal[1, 2] = 1

    def __init__(self, context: BridgeContext) -> None:
        self._context = context

    async def notice(
        self,
        session_id: str,
        severity: NoticeSeverity,
        title: str,
        description: str | None = None,
    ) -> bool:
        if not shows_notices(self._context.client_capabilities):
            return False
        await self._send(
            session_id, Notice(severity=severity, title=title, description=description)
        )
        return True

    async def say(self, session_id: str, text: str, message_id: str) -> None:
        await self._send(
            session_id, AgentMessageChunk(content=TextContent(text=text), message_id=message_id)
        )

    async def commands(self, session_id: str, update: AvailableCommandsUpdate) -> None:
        await self._send(session_id, update)

    async def config_options(self, session_id: str, options: list[SessionConfigOption]) -> None:
        await self._send(session_id, ConfigOptionUpdate(config_options=options))

    async def mode_changed(
        self, session_id: str, mode: str, options: list[SessionConfigOption]
    ) -> None:
        await self._send(session_id, CurrentModeUpdate(current_mode_id=mode))
        await self.config_options(session_id, options)

    async def session_info(self, session_id: str, title: str | None, updated_at: str) -> None:
        await self._send(session_id, SessionInfoUpdate(title=title, updated_at=updated_at))

    def session_view(
        self,
        session_id: str,
        cwd: str,
        records: Sequence[rec.Record],
        links: dict[str, str] | None = None,
    ) -> SessionView:
        from .v1_view import V1SessionView  # the runtime half: loaded with the runtime

        return V1SessionView(self._context, session_id, records, links)

    async def _send(
        self,
        session_id: str,
        update: Notice
        | AgentMessageChunk
        | AvailableCommandsUpdate
        | ConfigOptionUpdate
        | CurrentModeUpdate
        | SessionInfoUpdate,
    ) -> None:
        await send_update(self._context.peer, session_id, update)
