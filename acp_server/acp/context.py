"""What every ACP method group of one client connection shares, instead of the connection.

The handshake, the session methods, modes and config options, prompts and the session wiring
each take this small object; none of them imports the connection, which composes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from anyio.abc import TaskGroup

from acp_protocol.initialize import ClientCapabilities
from acp_server.ids import IdFactory, random_ids
from acp_server.process import ProcessRegistry
from acp_server.process.bubblewrap import BubblewrapProbe
from acp_server.rpc.peer import Peer

from .errors import session_not_found
from .options import ServerOptions
from .presenter import Presenter
from .sessions import AcpSession, SessionRegistry

if TYPE_CHECKING:
    from acp_server.agent import Agent
    from acp_server.models.base import ModelProvider


@dataclass
class BridgeContext:
    """One client's peer, options, capabilities, sessions and loaded model providers."""

    peer: Peer
    task_group: TaskGroup
    options: ServerOptions
    processes: ProcessRegistry
    """Where every child process of every session is registered (the server's, created at
    start-up and stopped at shutdown)."""
    sessions: SessionRegistry = field(default_factory=SessionRegistry)
    children: dict[str, Agent] = field(default_factory=dict)
    """Running `task` children shown to the client as sessions, by session id (for
    `session/cancel` on a child; see acp_server/acp/child_sessions.py)."""
    client_capabilities: ClientCapabilities = field(default_factory=ClientCapabilities)
    """What the client said in `initialize`; all unsupported until then."""
    providers: dict[str, ModelProvider] = field(default_factory=dict)
    """Model providers by spec, each loaded once per connection."""
    sandbox_probe: BubblewrapProbe = field(default_factory=BubblewrapProbe)
    """Whether bwrap works here: the server's, probed at start-up, then remembered."""
    bwrap: str | None = None
    """The probe's answer: bwrap's path, or None where the command sandbox cannot run."""
    sandbox_missing: str = ""
    """Why the command sandbox cannot run here ("" when it can, or before the probe)."""
    sandbox_notice_due: bool = False
    """The client has not yet been told why sandboxed mode is not offered."""
    commands_shown: dict[str, tuple[tuple[str, str, str | None], ...]] = field(default_factory=dict)
    """By session id: the custom slash commands last advertised (`acp/command_listing.py`)."""
    clashes_told: dict[str, frozenset[str]] = field(default_factory=dict)
    """By session id: what the user was told about their commands: names a built-in
    overrides, and `NAME REPOSITORY_FILE` for a repository's file overriding their own."""
    logged_out: bool = False
    """The client logged out (acp/logout.py): prompts and logins answer the how-to."""
    presenter: Presenter = field(init=False)
    """How the client sees its sessions, in the connection's wire version (set by the
    connection: v1's until `initialize` chooses)."""

    @property
    def ids(self) -> IdFactory:
        """Ids of messages and tool calls the bridge makes up: deterministic mode's, or random."""
        return self.options.ids or random_ids

    def provider_for(self, spec: str) -> ModelProvider:
        """The provider of an offered model spec, loaded once per connection."""
        provider = self.providers.get(spec)
        if provider is None:
            if self.options.load_model is None:
                raise ValueError(f"cannot load model {spec!r}")
            provider = self.options.load_model(spec)
            self.providers[spec] = provider
        return provider

    def session(self, session_id: str) -> AcpSession:
        """The active session with this id, or -32002."""
        session = self.sessions.get(session_id)
        if session is None:
            raise session_not_found(session_id)
        return session
