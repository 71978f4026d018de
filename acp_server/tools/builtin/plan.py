"""The `todo_write` tool: the model's plan, which the client shows as ACP `plan` updates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.tools.base import PlanItem, ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.builtin._common import BuiltinTool, failed, plural

Priority = Literal["high", "medium", "low"]
Status = Literal["pending", "in_progress", "completed"]


class TodoEntry(msgspec.Struct, forbid_unknown_fields=True):
    content: Annotated[str, msgspec.Meta(description="What the step is.")]
    priority: Priority = "medium"
    status: Status = "pending"


class TodoWriteArgs(msgspec.Struct, forbid_unknown_fields=True):
    entries: Annotated[list[TodoEntry], msgspec.Meta(description="The complete plan, in order.")]


_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoWrite(BuiltinTool[TodoWriteArgs]):
    name = "todo_write"
    kind: ToolKind = "think"
    args_type = TodoWriteArgs
    description = (
        "Replace your plan (a todo list the user sees) with `entries`, the complete new list. "
        "Use it for tasks with several steps: write the plan first, then call it again to mark "
        "an entry `in_progress` when you start it and `completed` when it is done (keep one "
        "entry in progress at a time). Each entry has `content`, optional `priority` "
        "(high/medium/low, default medium) and `status` (pending/in_progress/completed, default "
        "pending). An empty list clears the plan."
    )

    def title(self, arguments: Mapping[str, Any]) -> str:
        return "Update plan"

    async def act(
        self, args: TodoWriteArgs, call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        for number, entry in enumerate(args.entries):
            if not entry.content.strip():
                return failed(
                    f"Invalid arguments for todo_write: entries[{number}].content is empty; "
                    "every entry needs a description"
                )
        plan = [
            PlanItem(entry.content.strip(), entry.priority, entry.status) for entry in args.entries
        ]
        if not plan:
            return ToolOutput("Plan cleared.", plan=plan)
        counts = {status: sum(item.status == status for item in plan) for status in _MARK}
        summary = (
            f"Plan updated: {plural(len(plan), 'entry', 'entries')} "
            f"({counts['completed']} completed, {counts['in_progress']} in progress, "
            f"{counts['pending']} pending)"
        )
        lines = [
            f"{_MARK[item.status]} {item.content}"
            + (f" ({item.priority} priority)" if item.priority != "medium" else "")
            for item in plan
        ]
        return ToolOutput(summary + "\n" + "\n".join(lines), plan=plan)
