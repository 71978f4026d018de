"""Who may do what: permission modes, "always" rules, and the approval seam that applies them.

The policy decides per tool call from the session's mode, the tool's kind, whether every path
it touches is inside the workspace, and the user's earlier "always" answers. When it must ask,
it asks through `PermissionAsker` (the ACP bridge sends `session/request_permission`). See
docs/rfc/implemented/feature/2026-11-30-permissions-and-modes.md. The modes themselves and
`check_mode`: `tools/modes.py` (re-exported here, with the "always" rules and the key of the
workspace they hold in: `tools/permission_rules.py`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from acp_server.cancellation import TurnSignal
from acp_server.verdicts import Deny

from .base import Tool, ToolKind
from .command_sandbox import CommandPlan, CommandSandbox
from .modes import MODE_IDS as MODE_IDS
from .modes import MODES as MODES
from .modes import SANDBOX_ENV as SANDBOX_ENV
from .modes import Mode as Mode
from .modes import ModeInfo as ModeInfo
from .modes import ModeRefused as ModeRefused
from .modes import check_mode as check_mode
from .permission_rules import Rules as Rules
from .permission_rules import rule_scope
from .permission_rules import workspace_key as workspace_key
from .workspace import PathRefused, PathRoots


class CallToApprove(Protocol):
    """The tool call the approval seam is asked about (the model's `ToolCallRequest`);
    structural, so `tools/` need not import `models/`, which imports `tools/`."""

    @property
    def call_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> dict[str, Any]: ...


Answer = Literal["allow_once", "allow_always", "reject_once", "reject_always", "cancelled"]


_READS: frozenset[ToolKind] = frozenset({"read", "search", "think"})
_EDITS: frozenset[ToolKind] = frozenset({"edit", "delete", "move"})


Verdict = Literal["allow", "ask", "deny"]

OUTSIDE = "outside the workspace (only default mode asks before going further)"
"""The reason a path outside the workspace is refused in accept_edits and read_only modes."""


def decide(
    mode: Mode,
    kind: ToolKind,
    inside: bool,
    always: Mapping[ToolKind, bool],
    confined: bool = False,
    network: bool = False,
) -> tuple[Verdict, str]:
    """What to do with a call of `kind` (`inside`: every path it touches is in the workspace).

    `always` maps kinds to the user's "always" answers (True allow, False reject).
    `confined`: the call runs in the command sandbox and asks for nothing beyond it.
    `network`: `[sandbox] network` is on (sandboxed mode then lets `fetch` calls through).

    A `fetch` (web_fetch) asks in default, accept_edits and read_only modes (it changes
    nothing here; what it may send out is its URL, which the question shows); sandboxed mode
    allows it only with `[sandbox] network` on, and then without asking, like a confined
    command; bypass allows it.
    """
    if kind in _READS and inside:
        return "allow", ""
    if mode == "bypass":
        return "allow", ""
    if not inside and mode != "default":
        return "deny", OUTSIDE
    if kind == "fetch" and mode == "sandboxed":
        if network:
            return "allow", ""
        return "deny", (
            "sandboxed mode has no network: web_fetch is refused unless `network = true` is "
            "set in the [sandbox] table of the config file"
        )
    if mode == "read_only" and kind != "fetch":
        return "deny", f"read-only mode allows no {kind} actions"
    if always.get(kind) is False:
        return "deny", f"you chose to always reject {kind} actions in this session"
    if always.get(kind) is True and inside:
        return "allow", ""
    if mode in ("accept_edits", "sandboxed") and kind in _EDITS and inside:
        return "allow", ""
    if mode == "sandboxed" and confined and inside:
        return "allow", ""
    return "ask", ""


@dataclass(frozen=True)
class Crossing:
    """A path of a tool call that leads, or may lead, outside the workspace."""

    path: str
    """The resolved path (what an explicit allow grants)."""
    why: str
    """Said to the user and the model: where the path really goes."""
    certain: bool
    """True: the path is outside. False: it may be (a file with several hard links)."""


def _hard_links(path: str) -> int:
    """How many names the regular file at `path` has (1 for anything else, or nothing)."""
    try:
        info = os.stat(path)
    except OSError:
        return 1
    return info.st_nlink if stat.S_ISREG(info.st_mode) else 1


def question_title(title: str, beyond: Sequence[Crossing]) -> str:
    """The tool call's title as a permission question shows it: where each path that leaves
    the workspace really goes ("Write README.md → /home/me/.bashrc (outside the workspace)")."""
    notes: list[str] = []
    for crossing in beyond:
        if crossing.certain:
            shown = "" if crossing.path in title else f"→ {crossing.path} "
            notes.append(f"{shown}(outside the workspace)")
        else:
            notes.append(f"({crossing.why})")
    return " ".join([title, *notes])


@runtime_checkable
class PlannedCommand(Protocol):
    """A tool whose calls may run in the command sandbox (`bash`)."""

    def plan(self, arguments: Mapping[str, Any]) -> CommandPlan:
        """How the call would run under the session's current mode."""


@runtime_checkable
class StopsOwnWork(Protocol):
    """A tool that only stops what its own session started (`bash_stop`): it runs in every
    mode without a question, since it undoes what the user allowed when it started (see
    docs/rfc/implemented/architecture/2026-12-06-background-work.md)."""

    @property
    def stops_own_work(self) -> Literal[True]:
        """Always True: the marker."""


class PermissionAsker(Protocol):
    """Asks the user about one announced tool call."""

    async def ask(self, call_id: str, title: str, reason: str, signal: TurnSignal) -> Answer:
        """The user's answer; `cancelled` when the turn is being cancelled."""


class PermissionPolicy:
    """The session's permission state and its approval-seam listener."""

    def __init__(
        self,
        path_roots: PathRoots,
        tools: Mapping[str, Tool],
        asker: PermissionAsker,
        mode: Mode = "default",
        rules: Rules | None = None,
        remember: Callable[[ToolKind, bool, str], None] | None = None,
        command_sandbox: CommandSandbox | None = None,
    ) -> None:
        self.path_roots = path_roots
        self.command_sandbox = command_sandbox
        self.mode = mode
        self.rules = rules if rules is not None else Rules()
        self._tools = tools
        self._asker = asker
        self._remember = remember

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The tools this policy judges, by name."""
        return self._tools

    @property
    def mode(self) -> Mode:
        return self._mode

    @mode.setter
    def mode(self, mode: Mode) -> None:
        # The command sandbox follows the mode: `bash` runs confined in sandboxed mode only.
        self._mode = mode
        if self.command_sandbox is not None:
            self.command_sandbox.active = mode == "sandboxed"

    @property
    def _network(self) -> bool:
        """`[sandbox] network`: sandboxed mode lets web fetches through."""
        return self.command_sandbox is not None and self.command_sandbox.settings.network

    def offers(self, tool: Tool, *, can_ask: bool = True) -> bool:
        """Whether the mode lets `tool` run at all (inside the workspace), so that it is worth
        offering to the model: not when the mode denies its kind, nor, where nobody can be
        asked (a subagent), when it would ask. A command tool counts as confined in
        sandboxed mode."""
        if isinstance(tool, StopsOwnWork):
            return True
        confined = isinstance(tool, PlannedCommand) and self.mode == "sandboxed"
        always: dict[ToolKind, bool] = {}
        if tool.kind in self.rules.rejected:
            always[tool.kind] = False
        elif any(
            scope in (tool.kind, f"{tool.kind} {tool.name}")
            or scope.startswith((f"{tool.name} ", f"{tool.kind} {tool.name} "))
            for scope in self.rules.allowed
        ):
            always[tool.kind] = True  # some of its calls are allowed always
        verdict, _ = decide(self.mode, tool.kind, True, always, confined, self._network)
        return verdict == "allow" or (verdict == "ask" and can_ask)

    async def approve(self, call: CallToApprove, signal: TurnSignal) -> Deny | None:
        """The approval seam: None to run the call, `Deny` to refuse it."""
        tool = self._tools.get(call.name)
        if tool is None or isinstance(tool, StopsOwnWork):
            return None  # the loop answers unknown tools itself; stopping our own is allowed
        paths = [loc.path for loc in tool.locations(call.arguments)]
        # Resolving and a stat, on the loop like the path roots' own checks: a thread hop here
        # would let a client's EOF overtake the permission question.
        beyond = self._beyond(tool.kind, paths)
        plan = tool.plan(call.arguments) if isinstance(tool, PlannedCommand) else None
        confined = plan is not None and plan.confined and not plan.beyond
        scope = rule_scope(call.name, tool.kind, call.arguments, plan)
        always = self.rules.for_call(tool.kind, scope)
        verdict, reason = decide(self.mode, tool.kind, not beyond, always, confined, self._network)
        outside = [crossing.path for crossing in beyond]
        if verdict == "allow":
            self._grant(outside)
            return None
        if verdict == "deny":
            if reason == OUTSIDE:
                roots = ", ".join(self.path_roots.roots)
                whys = "; ".join(crossing.why for crossing in beyond)
                reason = (
                    f"{whys} (only default mode asks before going further); allowed roots: {roots}"
                )
            return Deny(reason)
        title = question_title(tool.title(call.arguments), beyond)
        if plan is not None:
            title = f"{title} {plan.describe()}"
        why = "; ".join(crossing.why for crossing in beyond)
        answer = await self._asker.ask(call.call_id, title, why, signal)
        signal.raise_if_aborted()
        if answer == "cancelled":
            # Clients answer `cancelled` when the turn is being cancelled; the tool does not run
            # either way, and the turn's own signal decides whether the turn ends aborted.
            return Deny("the permission request was cancelled")
        if answer in ("allow_always", "reject_always"):
            # "allow always" covers this call's scope only; "reject always" the whole kind.
            self.rules.add(tool.kind, scope, answer == "allow_always")
            if self._remember is not None:
                self._remember(tool.kind, answer == "allow_always", scope)
        if answer in ("allow_once", "allow_always"):
            self._grant(outside)
            return None
        return Deny("the user rejected this tool call")

    def _beyond(self, kind: ToolKind, paths: list[str]) -> list[Crossing]:
        """The paths of a call that lead, or may lead, outside the workspace (a few stats)."""
        found: list[Crossing] = []
        for path in paths:
            try:
                resolved = self.path_roots.resolve(path)
            except PathRefused:
                continue  # the tool refuses it itself, with the reason
            if not self.path_roots.contains(resolved):
                found.append(Crossing(resolved, f"{resolved} is outside the workspace", True))
            elif kind in _EDITS and resolved not in self.path_roots.granted:
                links = _hard_links(resolved)
                if links > 1:
                    found.append(
                        Crossing(
                            resolved,
                            f"{resolved} has {links} hard links, so the same file may be "
                            "outside the workspace",
                            False,
                        )
                    )
        return found

    def _grant(self, outside: list[str]) -> None:
        # An explicit allow for a path outside the workspace lets the tool's own check pass.
        for path in outside:
            self.path_roots.granted.add(self.path_roots.resolve(path))
