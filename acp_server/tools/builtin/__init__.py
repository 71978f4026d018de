"""The built-in tools, registered here and nowhere else (names and argument names are stable;
see ARCHITECTURE.md).

`builtin_tools` binds them to one session's path roots, file access and command runner. Every path
argument is checked against the roots: a path outside the workspace yields a failed output
naming the allowed roots, never an exception. Bad arguments likewise yield a failed output
naming the argument.
"""

from __future__ import annotations

from pathlib import Path

from acp_server.process.background import BackgroundItems
from acp_server.tools.ask_user import AskUser, FormAsker
from acp_server.tools.base import Tool
from acp_server.tools.budget import ToolBudget
from acp_server.tools.builtin.background import BashOutput, BashStop
from acp_server.tools.builtin.files import EditFile, ReadFile, WriteFile
from acp_server.tools.builtin.list_dir import ListDir
from acp_server.tools.builtin.plan import TodoWrite
from acp_server.tools.builtin.ripgrep import Ripgrep
from acp_server.tools.builtin.search import Glob, Grep
from acp_server.tools.builtin.shell import Bash
from acp_server.tools.builtin.skill import SkillTool
from acp_server.tools.builtin.web import WebFetch
from acp_server.tools.builtin.web_convert import HtmlConverter
from acp_server.tools.checkpoints import Checkpoints
from acp_server.tools.command_sandbox import CommandSandbox
from acp_server.tools.skill_places import SkillPlaces
from acp_server.tools.web_access import WebFetchSettings
from acp_server.tools.workspace import CommandRunner, FileAccess, PathRoots

__all__ = [
    "Bash",
    "BashOutput",
    "BashStop",
    "EditFile",
    "Glob",
    "Grep",
    "HtmlConverter",
    "ListDir",
    "ReadFile",
    "Ripgrep",
    "TodoWrite",
    "WebFetch",
    "WriteFile",
    "builtin_tools",
    "skill_tool",
]


def builtin_tools(
    path_roots: PathRoots,
    files: FileAccess,
    commands: CommandRunner,
    budget: ToolBudget = ToolBudget(),  # noqa: B008 - frozen: one shared default is safe
    command_sandbox: CommandSandbox | None = None,
    ripgrep: Ripgrep | None = None,
    web_fetch: WebFetchSettings | None = None,
    checkpoints: Checkpoints | None = None,
    forms: FormAsker | None = None,
    html_converter: HtmlConverter | None = None,
    background: BackgroundItems | None = None,
) -> list[Tool]:
    """The built-in tools for one session, in the order the model is shown them, each shaping
    its results to fit `budget`: the one list of them. `ripgrep` runs grep's and glob's `rg`
    (registered with the server's process registry; by default with none); `web_fetch` is
    `[web_fetch]` of the config file; `checkpoints` keeps what write_file and edit_file replace
    (for a rewind); `ask_user` is offered with `forms` only (a client that shows forms);
    `html_converter` runs web_fetch's conversions (registered with the server's process
    registry; by default with none); `background` is the session's background items (`bash`
    starts them, `bash_output` and `bash_stop` follow them; without it neither is offered).
    `skill_tool` makes the last one, which the toolbox offers once a skill exists."""
    body, results = budget.body_bytes, budget.max_search_results
    ripgrep = ripgrep if ripgrep is not None else Ripgrep()
    tools: list[Tool] = [
        ReadFile(
            path_roots,
            files,
            max_lines=budget.max_read_lines,
            max_bytes=body,
            max_image_bytes=budget.max_image_bytes,
        ),
        WriteFile(path_roots, files, checkpoints),
        EditFile(path_roots, files, checkpoints),
        ListDir(path_roots, max_entries=results, max_bytes=body),
        Glob(path_roots, max_results=results, max_bytes=body, ripgrep=ripgrep),
        Grep(path_roots, max_matches=results, max_bytes=body, ripgrep=ripgrep),
        Bash(
            path_roots,
            commands,
            max_bytes=body,
            command_sandbox=command_sandbox,
            background=background,
        ),
    ]
    if background is not None:
        tools += [
            BashOutput(path_roots, background, max_bytes=body),
            BashStop(path_roots, background, max_bytes=body),
        ]
    tools += [
        TodoWrite(path_roots),
        WebFetch(path_roots, web_fetch, max_bytes=body, converter=html_converter),
    ]
    if forms is not None:
        tools.append(AskUser(forms))
    return tools


def skill_tool(path_roots: PathRoots, user_dir: Path | None, places: SkillPlaces) -> Tool:
    """The `skill` tool of a session working in `path_roots` (its cwd's skills, and the user's
    in `user_dir`, the user's commands directory), looking in `places`."""
    return SkillTool(path_roots, Path(path_roots.cwd), user_dir, places)
