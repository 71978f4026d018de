"""What the client sees of its sessions, said once for either wire: the presenter.

One presenter per connection, chosen by its first `initialize` (v1 until then):
`V1Presenter` (acp/v1_presenter.py) or `V2Presenter` (acp/v2/presenter.py). It is the one thing
in the bridge that builds `session/update` params. Its surface is what the bridge means to
show (a notice, an agent's words outside the model's turn, the command list, the config
options, a mode change, the session's title), so the method groups call it without knowing
the wire; its `session_view` gives the runtime half of one session: the agent's event sink and
the askers its tools and hooks use. The runtime does not know which wire it serves. See
docs/rfc/implemented/architecture/2026-12-06-acp-v2-beside-v1.md.

Light on purpose: the session-level half is used before the runtime is loaded (the command
list after a new session's answer); the views import the runtime's renderers when the first
session is wired, which only happens once the runtime is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from acp_protocol.session_config import SessionConfigOption
from acp_protocol.session_update import AvailableCommandsUpdate, NoticeSeverity

if TYPE_CHECKING:
    from acp_server.agent import AgentEvent
    from acp_server.process.background import BackgroundItems
    from acp_server.session import records as rec
    from acp_server.tools.permissions import PermissionAsker
    from acp_server.tools.toolbox import FormAsker


__all__ = ["Presenter", "SessionView"]


class SessionView(Protocol):
    """How one session's runtime is shown on the connection's wire."""

    @property
    def permissions(self) -> PermissionAsker:
        """Asks the user about a tool call (the permission policy's asker)."""

    @property
    def forms(self) -> FormAsker:
        """Asks the user a form question (`ask_user`), where the client takes forms."""

    async def __call__(self, event: AgentEvent) -> None:
        """The agent's event sink: show one runtime event."""

    async def consent_asked(self, call_id: str, title: str, commands: str, path: str) -> None:
        """Show the synthetic tool call a workspace-hooks consent question is about."""

    async def consent_answered(self, call_id: str, allowed: bool) -> None:
        """End that tool call: run (`completed`) or not (`failed`)."""

    def show_background(self, items: BackgroundItems) -> None:
        """Show the session's background commands from now on, as the wire allows (v1 has no
        way between turns: nothing; v2: display terminals and the state's background list)."""


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

    def session_view(
        self,
        session_id: str,
        cwd: str,
        records: Sequence[rec.Record],
        links: dict[str, str] | None = None,
    ) -> SessionView:
        """The runtime half for one session working in `cwd`, whose client has seen `records`
        (replayed or live); `links`: its `task` calls' child sessions, where they are shown as
        sessions (a v1 opt-in). Called once the runtime is loaded."""
