"""A session's tools and their one owner, the `Toolbox`; and the door of `tools/` for the bridge.

A `Toolbox` is built from the config file's tool sections (`ToolSettings`) and what the bridge
plugs in (`Transports`: the client's files, terminals and forms, where it offers them; the local
machine serves the rest). It holds the session's tools in the order the model sees them.
`add()` is the only way the set grows (the `task` tool once the session has a model, MCP tools as
their servers connect, `skill` once a skill appears), and it tells its listeners (the agent);
the permission policy made by `policy()` judges the tools through the live `by_name`, so a tool
added later is judged too. `for_child()` is what a subagent's tools are derived from. See
docs/rfc/implemented/architecture/2026-12-06-toolbox-and-one-entry-point.md.

The bridge imports three modules of `tools/`: this one, `base` (what a tool is) and
`permissions` (who may do what), which `tests/test_layers.py` holds. So this module also names
what the bridge implements or reads of the rest: the transport contracts, the custom-command
files, the modes and the settings. It is imported before `session/new` is answered, so only the
light settings and modes load with it; the names in `_HOME` load on first use (PEP 562
`__getattr__`, as `acp_server.agent` does), and a toolbox's parts when one is built.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .budget import ToolBudget as ToolBudget
from .modes import MODE_IDS as MODE_IDS
from .modes import MODES as MODES
from .modes import Mode as Mode
from .modes import ModeInfo as ModeInfo
from .modes import ModeRefused as ModeRefused
from .modes import check_mode as check_mode
from .sandbox_settings import SandboxSettings as SandboxSettings
from .skill_places import SkillPlaces as SkillPlaces
from .test_command import AutoTestSettings as AutoTestSettings
from .test_command import ProjectTestCommand as ProjectTestCommand
from .test_command import find_test_command
from .web_access import WebFetchSettings as WebFetchSettings

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp_server.process import ProcessRegistry
    from acp_server.process.background import BackgroundItems
    from acp_server.session import records as rec

    from .ask_user import AskFailed as AskFailed
    from .ask_user import FormAnswer as FormAnswer
    from .ask_user import FormAsker as FormAsker
    from .base import Tool, ToolKind
    from .checkpoint_store import CheckpointStore
    from .command_sandbox import CommandSandbox
    from .custom_commands import CommandScan as CommandScan
    from .custom_commands import CommandUnreadable as CommandUnreadable
    from .custom_commands import expand_command as expand_command
    from .custom_commands import scan_commands as scan_commands
    from .custom_commands import user_commands_dir as user_commands_dir
    from .permission_rules import Rules
    from .permissions import PermissionAsker, PermissionPolicy
    from .text_window import TextWindow as TextWindow
    from .text_window import window_of_text as window_of_text
    from .workspace import CommandResult as CommandResult
    from .workspace import CommandRunner as CommandRunner
    from .workspace import CommandWatch as CommandWatch
    from .workspace import FileAccess as FileAccess
    from .workspace import PathRoots

log = logging.getLogger(__name__)

TASK_TOOL_NAME = "task"
"""The subagent tool (`agent/subagents.py`): a child gets its own, never its parent's."""

_HOME = {
    "AskFailed": "ask_user",
    "CommandResult": "workspace",
    "CommandRunner": "workspace",
    "CommandScan": "custom_commands",
    "CommandUnreadable": "custom_commands",
    "CommandWatch": "workspace",
    "FileAccess": "workspace",
    "FormAnswer": "ask_user",
    "FormAsker": "ask_user",
    "TextWindow": "text_window",
    "expand_command": "custom_commands",
    "scan_commands": "custom_commands",
    "user_commands_dir": "custom_commands",
    "window_of_text": "text_window",
}
"""Each name loaded on first use, and the module of `tools/` that defines it."""


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"acp_server.tools.{home}"), name)
    globals()[name] = value
    return value


@dataclass(frozen=True)
class ToolSettings:
    """The config file's sections the tools read, as the command line decided them."""

    budget: ToolBudget = field(default_factory=ToolBudget)
    """`[tools]`: how much of a tool's result reaches the model."""
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    """`[sandbox]`: what commands in sandboxed mode may do."""
    web_fetch: WebFetchSettings = field(default_factory=WebFetchSettings)
    """`[web_fetch]`: the web_fetch tool's limits and reach."""
    skills: SkillPlaces = field(default_factory=SkillPlaces)
    """`[skills] dirs`: where skills are looked for."""
    tests: AutoTestSettings = field(default_factory=AutoTestSettings)
    """`[tests]`: the project's test command (else found in the repository) and the test
    runs after a model's edits."""


@dataclass(frozen=True)
class Transports:
    """What the bridge plugs in for one session. None where the client offers nothing: the
    local machine then reads and writes the files and runs the commands."""

    read: FileAccess | None = None
    """The client's `fs/read_text_file` (it sees the editor's unsaved buffers)."""
    write: FileAccess | None = None
    """The client's `fs/write_text_file`."""
    commands: CommandRunner | None = None
    """The client's terminals (a command shows live in the editor). Commands confined by the
    sandbox run locally all the same: a client's terminal cannot be sandboxed by us."""
    forms: FormAsker | None = None
    """Form questions to the user (elicitation): `ask_user` is offered only with one."""


@dataclass(frozen=True)
class Machine:
    """What the local machine gives every session: the process registry the server stops at
    exit, bubblewrap's path (None where the command sandbox cannot run), the data directory
    the checkpoints of written files are kept under, and the task group that runs background
    commands (the connection's: it outlives every turn; None: no background commands)."""

    data_dir: Path
    processes: ProcessRegistry | None = None
    bwrap: str | None = None
    task_group: TaskGroup | None = None


ToolsListener = Callable[[Sequence["Tool"]], None]


class Toolbox:
    """One session's tools (or a subagent's), in the order the model sees them, and what
    they share: the path roots, the command sandbox, the checkpoint store."""

    def __init__(
        self,
        path_roots: PathRoots,
        tools: Sequence[Tool] = (),
        *,
        command_sandbox: CommandSandbox | None = None,
        checkpoint_store: CheckpointStore | None = None,
        skill: Tool | None = None,
        tests: AutoTestSettings | None = None,
        background: BackgroundItems | None = None,
    ) -> None:
        """Hold `tools` (`for_session` builds a session's); `skill` is the `skill` tool
        waiting for a skill to appear (`offer_skill`); `tests` says the project's test
        command, if the config file does (None: none is run)."""
        self.path_roots = path_roots
        self._tests = tests
        self.command_sandbox = command_sandbox
        self.checkpoint_store = checkpoint_store
        """Where the file tools keep what they replace, and where `/rewind` finds it."""
        self.background = background
        """The session's background commands: its subagents share them, and the session's
        end stops them (`aclose`)."""
        self._tools: list[Tool] = []
        self._by_name: dict[str, Tool] = {}
        self._listeners: list[ToolsListener] = []
        self._skill = skill
        self.add(tools)

    @classmethod
    def for_session(
        cls,
        cwd: str,
        extra_roots: Sequence[str],
        settings: ToolSettings,
        transports: Transports,
        machine: Machine,
        *,
        user_dir: Path | None,
    ) -> Toolbox:
        """A session's toolbox: the built-in tools (tools/builtin/__init__.py), reaching
        files and commands through `transports` where given, else locally; `skill` from the
        start when the workspace or `user_dir` (the user's commands directory) has skills,
        else held back until one appears."""
        # Here, not at the top: this module is imported before `session/new` is answered,
        # and a toolbox is first built in the warm-up (the ready-before-the-runtime RFC).
        from acp_server.process.background import BackgroundItems

        from .builtin import HtmlConverter, Ripgrep, builtin_tools, skill_tool
        from .checkpoint_store import CheckpointStore
        from .checkpoints import CHECKPOINTS_DIR, Checkpoints
        from .command_sandbox import CommandSandbox
        from .custom_commands import scan_skills
        from .local_commands import LocalCommands
        from .local_files import LocalFiles
        from .workspace import PathRoots, SplitFiles

        path_roots = PathRoots(cwd, extra_roots)
        budget = settings.budget
        local = LocalFiles()
        files = SplitFiles(transports.read or local, transports.write or local)
        commands = transports.commands or LocalCommands(registry=machine.processes)
        command_sandbox = CommandSandbox(
            path_roots, machine.bwrap, settings.sandbox, machine.processes
        )
        store = CheckpointStore(
            machine.data_dir / CHECKPOINTS_DIR, budget.max_checkpoint_store_bytes
        )
        background = BackgroundItems(machine.task_group, machine.processes)
        tools = builtin_tools(
            path_roots,
            files,
            commands,
            budget,
            command_sandbox,
            Ripgrep(machine.processes),
            settings.web_fetch,
            Checkpoints(store, budget.max_checkpoint_bytes),
            transports.forms,
            HtmlConverter(machine.processes),
            background,
        )
        skill = skill_tool(path_roots, user_dir, settings.skills)
        try:
            has_skills = bool(scan_skills(Path(cwd), user_dir, settings.skills).commands)
        except (OSError, RuntimeError, ValueError) as exc:  # a hostile repository
            log.warning("skills of %s were not read: %s", cwd, exc)
            has_skills = False
        toolbox = cls(
            path_roots,
            tools,
            command_sandbox=command_sandbox,
            checkpoint_store=store,
            skill=None if has_skills else skill,
            tests=settings.tests,
            background=background,
        )
        if has_skills:
            toolbox.add([skill])  # the model loads skills
        return toolbox

    @property
    def tools(self) -> Sequence[Tool]:
        """The tools, in the order the model sees them (a copy: grow the set with `add`)."""
        return tuple(self._tools)

    @property
    def by_name(self) -> MappingProxyType[str, Tool]:
        """The tools by name, live: a tool added later is found here at once."""
        return MappingProxyType(self._by_name)

    def add(self, tools: Sequence[Tool]) -> None:
        """Offer `tools` too, after those offered already (a name offered already keeps its
        first tool), and tell the listeners which were new."""
        new = [tool for tool in tools if tool.name not in self._by_name]
        for tool in new:
            self._tools.append(tool)
            self._by_name[tool.name] = tool
        if not new:
            return
        for listener in list(self._listeners):
            listener(new)

    def on_add(self, listener: ToolsListener) -> None:
        """Call `listener` with the tools each later `add` offers (the agent offers them to
        the model from its next request on)."""
        self._listeners.append(listener)

    def offer_skill(self) -> None:
        """Offer the `skill` tool held back at the start (a skill appeared since); once."""
        skill, self._skill = self._skill, None
        if skill is not None:
            self.add([skill])

    def policy(
        self,
        asker: PermissionAsker,
        *,
        mode: Mode = "default",
        rules: Rules | None = None,
        remember: Callable[[ToolKind, bool, str], None] | None = None,
    ) -> PermissionPolicy:
        """A permission policy judging this toolbox's tools (through `by_name`: tools added
        later too) in its path roots, with its command sandbox, asking `asker`; `remember`
        hears each "always" answer (kind, allow, scope)."""
        from .permissions import PermissionPolicy

        return PermissionPolicy(
            self.path_roots,
            self.by_name,
            asker,
            mode,
            rules=rules,
            remember=remember,
            command_sandbox=self.command_sandbox,
        )

    def test_command(self) -> ProjectTestCommand | None:
        """The project's test command: the config file's, else the one the working directory
        shows (looked for at each call: the repository may change); None without either, or
        for a subagent's toolbox."""
        if self._tests is None:
            return None
        return find_test_command(Path(self.path_roots.cwd), self._tests)

    def for_child(self) -> Toolbox:
        """A subagent's toolbox: these tools as they are now, without `task` (a child gets a
        `task` of its own, bound to its own session, while its depth allows), sharing the
        path roots, the command sandbox, the checkpoint store and the background commands
        (what a child starts in the background is the session's). Nothing is held back: a
        skill that appears later reaches the next child."""
        return Toolbox(
            self.path_roots,
            [tool for tool in self._tools if tool.name != TASK_TOOL_NAME],
            command_sandbox=self.command_sandbox,
            checkpoint_store=self.checkpoint_store,
            background=self.background,
        )

    async def read_links(self, parts: list[rec.Part]) -> list[rec.Part]:
        """`parts` with each link to a file inside the workspace read into the prompt
        (tools/resource_links.py)."""
        from .resource_links import read_resource_links

        return await read_resource_links(parts, self.path_roots)


__all__ = [
    "MODES",
    "MODE_IDS",
    "TASK_TOOL_NAME",
    "AskFailed",
    "AutoTestSettings",
    "CommandResult",
    "CommandRunner",
    "CommandScan",
    "CommandUnreadable",
    "CommandWatch",
    "FileAccess",
    "FormAnswer",
    "FormAsker",
    "Machine",
    "Mode",
    "ModeInfo",
    "ModeRefused",
    "ProjectTestCommand",
    "SandboxSettings",
    "SkillPlaces",
    "TextWindow",
    "ToolBudget",
    "ToolSettings",
    "Toolbox",
    "Transports",
    "WebFetchSettings",
    "check_mode",
    "expand_command",
    "scan_commands",
    "user_commands_dir",
    "window_of_text",
]
