"""The interface between the agent loop and a tool.

A tool is bound to its session when it is created (workspace roots, client capabilities), so
`run` receives only the model's arguments and the turn signal. The signal is a parameter, never
stored: a tool that keeps it could act on a later turn's behalf.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from acp_server.agent.cancellation import TurnSignal

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns to the model; `failed` marks an error result."""

    text: str
    failed: bool = False


class Tool(Protocol):
    """A callable capability offered to the model."""

    @property
    def name(self) -> str:
        """The name the model calls it by."""

    @property
    def description(self) -> str:
        """What it does, for the model."""

    @property
    def parameters(self) -> Mapping[str, Any]:
        """JSON Schema of its arguments."""

    @property
    def kind(self) -> ToolKind:
        """What kind of action it is (shown to the user; drives permission policy)."""

    def title(self, arguments: Mapping[str, Any]) -> str:
        """A short human-readable title for one call."""

    async def run(self, arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        """Do the work. Stop promptly when `signal` aborts (raise `TurnAborted`)."""
