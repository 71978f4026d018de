"""What the client sees of its sessions, said once for either wire: the presenter.

One presenter per connection, chosen by its first `initialize` (v1 until then): `V1Presenter`
here, or `V2Presenter` (acp/v2/presenter.py). It is the one thing in the bridge that builds
`session/update` params. Its surface is what the bridge means to show (a notice, an agent's
words outside the model's turn, the command list, the config options, a mode change, the
session's title), so the method groups call it without knowing the wire; its `session_view`
gives the runtime half of one session: the agent's event sink and the askers its tools and
hooks use. The runtime does not know which wire it serves. See
docs/rfc/proposed/architecture/2026-12-06-acp-v2-beside-v1.md.

Light on purpose: the session-level half is used before the runtime is loaded (the command
list after a new session's answer); the views import the runtime's renderers when the first
session is wired, which only happens once the runtime is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol

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
    from acp_server.agent import AgentEvent
    from acp_server.session import records as rec
    from acp_server.tools.permissions import PermissionAsker
    from acp_server.tools.toolbox import FormAsker

    from .child_sessions import ChildSessions
    from .context import BridgeContext

__all__ = ["Presenter", "SessionView", "V1Presenter"]


class SessionView(Protocol):
    """How one session's runtime is shown on the connection's wire."""

    @property
    def permissions(self) -> PermissionAsker:
        """Asks the user about a tool call (the permission policy's asker)."""

    @property
    def forms(self) -> FormAsker:
        """Asks the user a form question (`ask_user`), where the client takes forms."""

    @property
    def children(self) -> ChildSessions | None:
        """Shows `task` children as sessions of their own (a v1 opt-in); None where not."""

    async def __call__(self, event: AgentEvent) -> None:
        """The agent's event sink: show one runtime event."""

    async def consent_asked(self, call_id: str, title: str, commands: str, path: str) -> None:
        """Show the synthetic tool call a workspace-hooks consent question is about."""

    async def consent_answered(self, call_id: str, allowed: bool) -> None:
        """End that tool call: run (`completed`) or not (`failed`)."""


class Presenter(Protocol):
    """What the bridge shows of its sessions, in the connection's wire version."""

    version: Literal[1, 2]

    async def notice(
        self,
        session_id: str,
        severity: NoticeSeverity,
        title: str,
        description: str | None = None,
    ) -> bool:
        """A `notice`; False (nothing sent) where the wire needs an opt-in the client did not
        give, so the caller can say it another way."""

    async def say(self, session_id: str, text: str, message_id: str) -> None:
        """The agent's own words outside the model's answer (a command's answer, a hook's
        refusal, MCP failures for a client without notices)."""

    async def commands(self, session_id: str, update: AvailableCommandsUpdate) -> None:
        """The session's slash commands (the complete list)."""

    async def config_options(self, session_id: str, options: list[SessionConfigOption]) -> None:
        """The session's config options changed (the complete list)."""

    async def mode_changed(
        self, session_id: str, mode: str, options: list[SessionConfigOption]
    ) -> None:
        """The permission mode changed; `options` are the config options with it."""

    async def session_info(self, session_id: str, title: str | None, updated_at: str) -> None:
        """The session's title (and when it changed)."""

    def session_view(self, session_id: str, cwd: str, records: Sequence[rec.Record]) -> SessionView:
        """The runtime half for one session working in `cwd`, whose client has seen `records`
        (replayed or live). Called once the runtime is loaded."""


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

    def session_view(self, session_id: str, cwd: str, records: Sequence[rec.Record]) -> SessionView:
        from .v1_view import V1SessionView  # the runtime half: loaded with the runtime

        return V1SessionView(self._context, session_id, records)

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
