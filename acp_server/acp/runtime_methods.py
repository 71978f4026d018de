"""The method groups that need the runtime, composed for one connection.

Imported by the connection on the first session method, not before `initialize` is answered:
this module pulls in the agent, the journal, the tools and the model adapters.
"""

from __future__ import annotations

from .context import BridgeContext
from .modes import SessionConfig
from .prompting import PromptMethods
from .session_methods import SessionMethods
from .wiring import SessionWiring


class RuntimeMethods:
    """Session wiring, session methods, modes and config options, prompts: one per client."""

    def __init__(self, context: BridgeContext) -> None:
        self.wiring = SessionWiring(context)
        self.config = SessionConfig(context)
        self.sessions = SessionMethods(context, self.wiring, self.config)
        self.prompts = PromptMethods(context, self.wiring, self.config)
