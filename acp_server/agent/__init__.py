"""The agent runtime: turns, steps, the inbox, and explicit turn cancellation.

This module is the runtime's public face: the ACP bridge and the extensions import from here
only, never from the modules below it (tests may). See
docs/rfc/implemented/architecture/2026-12-01-layers-and-bridge.md.

The names load on first use (PEP 562 `__getattr__`): importing `acp_server.agent.settings` or
`acp_server.agent.instruction_settings` (what the CLI does to read the config file, before
`initialize` is answered) does not load the loop.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent import Agent, AgentHandle, spawn_agent
    from .client_prompt import ClientPrompt, ClientPromptMode, cap_client_prompt
    from .events import (
        AgentEvent,
        CompactionEnded,
        CompactionStarted,
        MessageChunk,
        ModelWaiting,
        PlanUpdated,
        Status,
        ThoughtChunk,
        ToolCallAnnounced,
        ToolCallDrafted,
        ToolCallProgress,
        TurnEnded,
        TurnSettled,
        TurnStarting,
        UserMessageRecorded,
    )
    from .inbox import Blocked, Dropped, PromptTicket, TicketResult
    from .instruction_settings import InstructionSettings, user_instructions_file
    from .instructions import ProjectInstructions, Roots
    from .loop import AgentConfig
    from .rewind import RewindDone, RewindFailed, rewind_to, session_turns
    from .seams import PromptSubmission, Seams, StepInfo, StepResult, TurnProgress
    from .settings import SubagentLimits, TurnLimits
    from .status_line import background_status
    from .subagents import offered_by, session_task_tool

_HOME = {
    "Agent": "agent",
    "AgentConfig": "loop",
    "AgentEvent": "events",
    "AgentHandle": "agent",
    "background_status": "status_line",
    "Blocked": "inbox",
    "ClientPrompt": "client_prompt",
    "ClientPromptMode": "client_prompt",
    "CompactionEnded": "events",
    "CompactionStarted": "events",
    "Dropped": "inbox",
    "InstructionSettings": "instruction_settings",
    "MessageChunk": "events",
    "ModelWaiting": "events",
    "PlanUpdated": "events",
    "ProjectInstructions": "instructions",
    "PromptSubmission": "seams",
    "PromptTicket": "inbox",
    "RewindDone": "rewind",
    "RewindFailed": "rewind",
    "Seams": "seams",
    "Status": "events",
    "StepInfo": "seams",
    "StepResult": "seams",
    "SubagentLimits": "settings",
    "ThoughtChunk": "events",
    "TicketResult": "inbox",
    "ToolCallAnnounced": "events",
    "ToolCallDrafted": "events",
    "ToolCallProgress": "events",
    "TurnEnded": "events",
    "TurnSettled": "events",
    "TurnStarting": "events",
    "UserMessageRecorded": "events",
    "TurnLimits": "settings",
    "TurnProgress": "seams",
    "Roots": "instructions",
    "cap_client_prompt": "client_prompt",
    "offered_by": "subagents",
    "rewind_to": "rewind",
    "session_task_tool": "subagents",
    "session_turns": "rewind",
    "spawn_agent": "agent",
    "user_instructions_file": "instruction_settings",
}
"""Each public name and the module below that defines it."""

__all__ = [
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "AgentHandle",
    "Blocked",
    "ClientPrompt",
    "ClientPromptMode",
    "CompactionEnded",
    "CompactionStarted",
    "Dropped",
    "InstructionSettings",
    "MessageChunk",
    "ModelWaiting",
    "PlanUpdated",
    "ProjectInstructions",
    "PromptSubmission",
    "PromptTicket",
    "RewindDone",
    "RewindFailed",
    "Roots",
    "Seams",
    "Status",
    "StepInfo",
    "StepResult",
    "SubagentLimits",
    "ThoughtChunk",
    "TicketResult",
    "ToolCallAnnounced",
    "ToolCallDrafted",
    "ToolCallProgress",
    "TurnEnded",
    "TurnLimits",
    "TurnProgress",
    "TurnSettled",
    "TurnStarting",
    "UserMessageRecorded",
    "background_status",
    "cap_client_prompt",
    "offered_by",
    "rewind_to",
    "session_task_tool",
    "session_turns",
    "spawn_agent",
    "user_instructions_file",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
