"""Every tool a session can offer, built as a session builds them (for tests that look at the
whole list: what the model is sent, what a child derives)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp_server.agent.subagents import TaskTool
from acp_server.cancellation import TurnSignal
from acp_server.models.base import ModelProvider
from acp_server.session.log import SessionLog
from acp_server.tools.ask_user import AskUser, FormAnswer
from acp_server.tools.base import Tool
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.builtin.skill import SkillTool
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.toolbox import Toolbox
from acp_server.tools.workspace import PathRoots


class _NoForms:
    async def ask(
        self, message: str, form: Mapping[str, Any], call_id: str, signal: TurnSignal
    ) -> FormAnswer:
        return FormAnswer("decline")


def every_session_tool(workspace: Path, model: ModelProvider) -> list[Tool]:
    """The built-ins, `ask_user`, `skill` and `task`, in the order a session offers them."""
    roots = PathRoots(str(workspace))
    tools: list[Tool] = builtin_tools(roots, LocalFiles(), LocalCommands())
    tools.append(AskUser(_NoForms()))
    tools.append(SkillTool(roots, workspace, None))
    tools.append(
        TaskTool(
            parent_log=SessionLog("s"),
            model=model,
            toolbox=Toolbox(roots, tools),
            journals=lambda *_: None,  # type: ignore[arg-type,return-value]
        )
    )
    return tools
