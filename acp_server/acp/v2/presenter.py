"""The v2 presenter: what the client sees of its sessions, in ACP v2's shapes.

v2 needs no opt-in for notices or compactions; config options carry `configId`; a mode change
is a `config_option_update` (v2 has no modes API). After a session's close answer nothing more
is sent for it (`closed`): the spec's "no other messages for the session on that connection".
The runtime half (`session_view`) is acp/v2/view.py. See acp/presenter.py for the surface and
docs/rfc/implemented/architecture/2026-12-06-acp-v2-beside-v1.md for the shape.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from acp_protocol import session_update as su1
from acp_protocol.content import TextContent
from acp_protocol.methods import SESSION_UPDATE
from acp_protocol.session_config import SessionConfigOption
from acp_protocol.v2 import session_update as su

from . import shapes

if TYPE_CHECKING:
    from acp_server.session import records as rec

    from ..context import BridgeContext
    from ..presenter import SessionView

__all__ = ["V2Presenter"]


class V2Presenter:
    """ACP v2 (the `Presenter` of acp/presenter.py)."""

    version: Literal[1, 2] = 2

    def __init__(self, context: BridgeContext) -> None:
        self._context = context
        self._closed: set[str] = set()

    async def send(self, session_id: str, update: su.SessionUpdate) -> None:
        """Queue one update of `session_id` on the ordered writer (nothing once it is closed)."""
        if session_id in self._closed:
            return
        notification = su.UpdateSessionNotification(session_id=session_id, update=update)
        await self._context.peer.notify(SESSION_UPDATE, notification)

    def closed(self, session_id: str) -> None:
        """The session's close is being answered: send nothing more for it."""
        self._closed.add(session_id)

    def reopened(self, session_id: str) -> None:
        """The session is active again (resumed after a close)."""
        self._closed.discard(session_id)

    async def notice(
        self,
        session_id: str,
        severity: su1.NoticeSeverity,
        title: str,
        description: str | None = None,
    ) -> bool:
        await self.send(
            session_id, su1.Notice(severity=severity, title=title, description=description)
        )
        return True

    async def say(self, session_id: str, text: str, message_id: str) -> None:
        await self.send(
            session_id, su.AgentMessageChunk(message_id=message_id, content=TextContent(text=text))
        )

    async def commands(self, session_id: str, update: su1.AvailableCommandsUpdate) -> None:
        listed = shapes.commands(update)
        await self.send(session_id, su.AvailableCommandsUpdate(available_commands=listed))

    async def config_options(self, session_id: str, options: list[SessionConfigOption]) -> None:
        shown = shapes.config_options(options)
        await self.send(session_id, su.ConfigOptionUpdate(config_options=shown))

    async def mode_changed(
        self, session_id: str, mode: str, options: list[SessionConfigOption]
    ) -> None:
        await self.config_options(session_id, options)

    async def session_info(self, session_id: str, title: str | None, updated_at: str) -> None:
        await self.send(session_id, su1.SessionInfoUpdate(title=title, updated_at=updated_at))

    def session_view(
        self,
        session_id: str,
        cwd: str,
        records: Sequence[rec.Record],
        links: dict[str, str] | None = None,
    ) -> SessionView:
        from .view import V2SessionView  # the runtime half: loaded with the runtime

        send = functools.partial(self.send, session_id)
        return V2SessionView(send, self._context, session_id, cwd, records)
