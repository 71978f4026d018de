"""The method groups that need the runtime, composed for one connection.

Imported by the connection's warm-up (in a worker thread, after the first `session/new` answer),
never before: this module pulls in the agent, the tools and the model adapters.
"""

from __future__ import annotations

from typing import Any

from acp_protocol.v2.methods import METHODS as V2_METHODS
from acp_server.rpc.dispatch import Route
from acp_server.session.journal import JournalStore

from ..context import BridgeContext
from ..rewind import RewindMethods
from ..v2.lifecycle import V2Sessions
from ..v2.prompts import V2Prompts
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
        # The v2 group: its handlers answer in v2's shapes through the groups above.
        self.v2_prompts = V2Prompts(context, self.prompts)
        self.v2_sessions = V2Sessions(context, self.wiring, self.sessions, self.config)

    def routes(self) -> list[Route[Any]]:
        """The methods of these groups (v1's), each declared beside its handler."""
        groups = (self.sessions, self.listing, self.config, self.prompts, self.rewinds)
        return [route for group in groups for route in group.routes()]

    def v2_routes(self) -> list[Route[Any]]:
        """v2's: the v2 group's own, and v1's where a method kept its row in the v2 table and
        the v2 group does not answer it (`session/list`, `session/delete`, the rewind
        extension)."""
        own = [*self.v2_prompts.routes(), *self.v2_sessions.routes()]
        answered = {route.method.name for route in own}
        shared = [
            route
            for group in (self.listing, self.sessions, self.rewinds)
            for route in group.routes()
            if V2_METHODS.get(route.method.name) is route.method
            and route.method.name not in answered
        ]
        return [*own, *shared]
