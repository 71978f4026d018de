"""The agent runtime: turns, steps, the inbox, and explicit turn cancellation.

This module is the runtime's public face: the ACP bridge and the extensions import from here
only, never from the modules below it (tests may). See
docs/rfc/implemented/architecture/2026-12-01-layers-and-bridge.md.
"""

from __future__ import annotations

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
)
from .inbox import Blocked, Dropped, PromptTicket, TicketResult
from .instructions import (
    InstructionSettings,
    ProjectInstructions,
    Workspace,
    user_instructions_file,
)
from .loop import AgentConfig
from .rewind import RewindDone, RewindFailed, rewind_to, session_turns
from .seams import PromptSubmission, Seams, StepInfo, StepResult, TurnProgress
from .subagents import SubagentLimits, offered_by, session_task_tool

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
    "TurnProgress",
    "Workspace",
    "cap_client_prompt",
    "offered_by",
    "rewind_to",
    "session_task_tool",
    "session_turns",
    "spawn_agent",
    "user_instructions_file",
]
