"""The `skill` tool: the model loads one skill's `SKILL.md` body by name. Offered to a session
that has skills, from its start or from the first prompt after a skill appeared (the bridge
scans at every prompt); the system prompt lists their names and descriptions
(`acp_server/agent/instructions.py`). Files are read as `tools/custom_commands.py` reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.printable import one_line
from acp_server.tools.base import ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.builtin._common import BuiltinTool, failed
from acp_server.tools.custom_commands import CommandUnreadable, expand_command, scan_skills
from acp_server.tools.skill_places import SkillPlaces
from acp_server.tools.workspace import PathRoots


class SkillArgs(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(description="The skill's name.")]


class SkillTool(BuiltinTool[SkillArgs]):
    name = "skill"
    kind: ToolKind = "read"
    args_type = SkillArgs
    description = (
        "Load a skill: its instructions (SKILL.md), to follow for the task at hand. The skills "
        "are listed with their descriptions in the system prompt; load one when its "
        "description fits the task. Other files of the skill are in the folder named in the "
        "result; read them with read_file when the instructions point to them."
    )

    def __init__(
        self,
        path_roots: PathRoots,
        cwd: Path,
        user_dir: Path | None,
        places: SkillPlaces = SkillPlaces(),  # noqa: B008 - frozen: one shared default is safe
    ) -> None:
        super().__init__(path_roots)
        self._cwd = cwd
        self._user_dir = user_dir
        self._places = places

    def title(self, arguments: Mapping[str, Any]) -> str:
        return f"Load skill {one_line(str(arguments.get('name', '')))[:60]}"

    async def act(self, args: SkillArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        skills = scan_skills(self._cwd, self._user_dir, self._places).commands
        skill = skills.get(args.name)
        if skill is None:
            known = ", ".join(sorted(skills)) or "none"
            return failed(f"No skill named {one_line(args.name)!r}; skills: {known}")
        try:
            return ToolOutput(text=expand_command(skill, ""))
        except CommandUnreadable as exc:
            return failed(f"The skill {args.name} could not be read: {exc}")
