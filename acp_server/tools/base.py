"""The interface between the agent loop and a tool.

A tool is bound to its session when it is created (workspace, client capabilities), so `run`,
its one entry point, receives only the model's arguments, the call it serves (`ToolCallContext`:
its id, its progress) and the turn signal. The signal is a parameter, never stored: a tool that
keeps it could act on a later turn's behalf.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from acp_server.cancellation import TurnSignal
from acp_server.session.records import FileCheckpoint

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]


@dataclass(frozen=True)
class Diff:
    """A file change: `old_text` None means the file is new."""

    path: str
    old_text: str | None
    new_text: str


@dataclass(frozen=True)
class Location:
    """A file (and 1-based line) a tool call touches."""

    path: str
    line: int | None = None


@dataclass(frozen=True)
class PlanItem:
    """One entry of the agent's plan (`todo_write`)."""

    content: str
    priority: Literal["high", "medium", "low"] = "medium"
    status: Literal["pending", "in_progress", "completed"] = "pending"


@dataclass(frozen=True)
class ImageData:
    """An image a tool returns (`read_file` of an image file): base64 bytes and their type."""

    data: str
    mime_type: str


@dataclass(frozen=True)
class ProcessExit:
    """How the process a tool ran ended: its exit code, or the name of the signal that killed
    it (`SIGKILL`); both None when the runner could not tell."""

    exit_code: int | None
    signal: str | None = None
    timed_out: bool = False
    """The tool stopped it at its timeout (what it exited with is then no verdict of its own)."""


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: text for the model, plus what the client is shown."""

    text: str
    failed: bool = False
    diffs: Sequence[Diff] = ()
    locations: Sequence[Location] = ()
    terminal_id: str | None = None
    """A client terminal the output came from (the client shows it live)."""
    plan: Sequence[PlanItem] | None = None
    """The complete new plan, when the tool changed it."""
    checkpoints: Sequence[FileCheckpoint] = ()
    """What the call's file writes replaced (kept for a rewind)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    images: Sequence[ImageData] = ()
    """Images for the model (those that take images; the text describes them for the others)
    and for the client, shown with the call."""
    process_exit: ProcessExit | None = None
    """How the command the call ran ended (a command tool's), for a display of the command."""


class ToolCallContext(Protocol):
    """The tool call a tool serves: its id, and how to show the call's progress."""

    @property
    def call_id(self) -> str:
        """The tool call's id (unique in the session)."""

    async def progress(self, text: str) -> None:
        """Show `text` on the tool call while it runs (replaces the previous progress)."""

    async def terminal(self, terminal_id: str) -> None:
        """Show the client terminal `terminal_id` on the tool call while it runs."""


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
        """JSON Schema of its arguments (a built-in's is generated from its argument Struct:
        tools/arguments.py)."""

    @property
    def kind(self) -> ToolKind:
        """What kind of action it is (shown to the user; drives permission policy)."""

    def title(self, arguments: Mapping[str, Any]) -> str:
        """A short human-readable title for one call."""

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        """Files the call will touch, known before it runs (absolute paths)."""

    async def run(
        self, arguments: Mapping[str, Any], call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        """Do the work: the one entry point. `call` is the call served (most tools need
        nothing of it). Stop promptly when `signal` aborts (raise `TurnAborted`)."""
