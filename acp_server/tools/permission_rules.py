"""What an "always" answer covers: the session's permission rules and their scopes.

"Allow always" holds for what was asked, not for the whole kind of action (issue 24):

- an edit inside the workspace (`edit`, `delete`, `move`): that kind of edit, inside the
  workspace only (`decide` never lets a rule reach outside);
- a command (`bash`): the same command pattern with the same needs beyond the sandbox
  (`needs: ["network"]` does not cover `needs: ["write_outside"]`, nor a call without needs);
- a web fetch (`web_fetch`): that tool on that one host (and port, when the URL names one
  that is not the scheme's default): `https://docs.python.org/...` covers every page of
  `docs.python.org`, over http or https, and nothing of `python.org` or `evil.example`;
- any other tool (an MCP tool): that one tool.

A command's pattern is its program and its words up to the first that is not an option
(`git push origin` -> `git push`, `rm -rf build` -> `rm -rf build`), each URL cut to its scheme
and host, followed by every host the command names; a command with shell syntax (`;`, `|`,
`&&`, redirections, substitutions, quotes, variables) is its own pattern, word for word, so
an allowed `ls` never covers `ls; curl ...`.

"Reject always" keeps its reach: it refuses the whole kind, as a user who said "never" expects.
See docs/rfc/implemented/feature/2026-12-01-scoped-permission-rules.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .base import ToolKind
from .command_sandbox import CommandPlan
from .web_access import fetch_origin

_EDITS: frozenset[str] = frozenset({"edit", "delete", "move"})
_SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}\\!'\"#*?\[\]~\n\r]")
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def _host_of(word: str) -> str | None:
    """The scheme and host of a URL word (`https://example.com`), else None."""
    if not _URL.match(word):
        return None
    try:
        parts = urlsplit(word)
        host = parts.hostname or ""
    except ValueError:
        return None
    return f"{parts.scheme.lower()}://{host}" if host else None


def command_pattern(command: str) -> str:
    """The pattern an "always" answer about `command` covers (see the module docstring)."""
    text = command.strip()
    words = text.split()
    if not words or _SHELL_SYNTAX.search(text) or "=" in words[0]:
        return f"exactly {text}"
    kept: list[str] = [words[0]]
    for word in words[1:]:
        kept.append(_host_of(word) or word)
        if not word.startswith("-"):
            break
    hosts = sorted({h for h in map(_host_of, words) if h is not None})
    return " ".join(kept) + (f" (hosts: {', '.join(hosts)})" if hosts else "")


def rule_scope(
    tool_name: str, kind: ToolKind, arguments: Mapping[str, Any], plan: CommandPlan | None
) -> str:
    """What an "allow always" answer about this call covers (journaled with the rule)."""
    if kind in _EDITS:
        return kind
    if plan is not None:
        command = arguments.get("command")
        pattern = command_pattern(command if isinstance(command, str) else "")
        needs = "+".join(plan.beyond) or "none"
        return f"{tool_name} needs={needs}: {pattern}"
    if kind == "fetch":
        origin = fetch_origin(arguments.get("url"))
        # A URL the tool refuses gets a scope no fetch of a real host can have.
        return f"{kind} {tool_name} host={origin or '(none)'}"
    return f"{kind} {tool_name}"


@dataclass
class Rules:
    """The session's "always" answers."""

    allowed: set[str] = field(default_factory=set)
    """Scopes (`rule_scope`) allowed always."""
    rejected: set[ToolKind] = field(default_factory=set)
    """Kinds rejected always."""

    def for_call(self, kind: ToolKind, scope: str) -> dict[ToolKind, bool]:
        """The answers that apply to a call of `kind` in `scope`, as `decide` takes them."""
        if kind in self.rejected:
            return {kind: False}
        return {kind: True} if scope in self.allowed else {}

    def add(self, kind: ToolKind, scope: str, allow: bool) -> None:
        if allow:
            self.allowed.add(scope)
        else:
            self.rejected.add(kind)

    def copy(self) -> Rules:
        return Rules(set(self.allowed), set(self.rejected))


def workspace_key(cwd: str, additional: Sequence[str]) -> list[str]:
    """A workspace's identity for its rules: the resolved cwd, then the resolved additional
    directories, sorted. Rules given in one workspace do not apply in another."""
    extra = sorted({os.path.realpath(path) for path in additional})
    return [os.path.realpath(cwd), *extra]
