"""The method groups that need the runtime, composed for one connection.

Imported by the connection's warm-up (in a worker thread, after the first `session/new` answer),
never before: this module pulls in the agent, the tools and the model adapters.
"""

from __future__ import annotations

from typing import Any

from acp_server.rpc.dispatch import Route
from acp_server.session.journal import JournalStore

from ..context import BridgeContext
from ..rewind import RewindMethods
from ..wiring import SessionWiring
from .config_options import SessionConfig
from .lifecycle import SessionMethods
from .listing import SessionListing
from .prompts import PromptMethods


class RuntimeMethods:
    """Session wiring, the lifecycle, listing, config options and prompts: one per client."""

    def __init__(self, context: BridgeContext, store: JournalStore) -> None:
        self.wiring = SessionWiring(context, store)
        self.config = SessionConfig(context)
        self.sessions = SessionMethods(context, self.wiring, self.config)
        self.listing = SessionListing(store)
        self.rewinds = RewindMethods(context)
        self.prompts = PromptMethods(context, self.wiring, self.config, self.rewinds)

    def routes(self) -> list[Route[Any]]:
        """The methods of these groups, each declared beside its handler."""
        groups = (self.sessions, self.listing, self.config, self.prompts, self.rewinds)
        return [route for group in groups for route in group.routes()]
