"""A session's command sandbox: whether `bash` runs confined, with what, and what it needs more.

In `sandboxed` mode a `bash` command runs under bubblewrap (`acp_server.process.bubblewrap`):
the session's roots and the configured extra paths writable, the rest read-only, a private
`/tmp`, network only when the config allows it. A command may declare that it needs more
(`needs: ["network"]`, `needs: ["write_outside"]`); the permission policy asks about it first,
and an allowed one runs with the network, or outside the sandbox. In the other modes commands
run as before, unconfined. See docs/rfc/implemented/feature/2026-12-01-command-sandbox.md.
`[sandbox]` of the config file: `tools/sandbox_settings.py` (re-exported here).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from acp_server.cancellation import TurnSignal
from acp_server.process import ProcessRegistry
from acp_server.process.bubblewrap import confine, writable_roots
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.sandbox_settings import SandboxSettings as SandboxSettings
from acp_server.tools.sandbox_settings import sandbox_settings as sandbox_settings
from acp_server.tools.workspace import CommandResult, CommandWatch, PathRoots

Need = Literal["network", "write_outside"]
NEEDS: tuple[Need, ...] = ("network", "write_outside")


WITH_NETWORK = (
    "with the host's network: what the host reaches, including its abstract Unix sockets "
    "such as X11 and D-Bus"
)
"""What the permission question says a confined command with the network may reach: the
network namespace is the host's, and abstract sockets live in it (pathname sockets under /run
and /var/tmp stay hidden)."""


@dataclass(frozen=True)
class CommandPlan:
    """How one `bash` call will run."""

    confined: bool
    network: bool = False
    beyond: tuple[Need, ...] = ()
    """What the call asks for beyond what the mode grants without a question."""

    def describe(self) -> str:
        """Said in the permission question: whether, and how, the command runs sandboxed."""
        if not self.confined:
            if "write_outside" in self.beyond:
                return "(not sandboxed: it asks to write outside the workspace)"
            return "(not sandboxed)"
        return f"(sandboxed, {WITH_NETWORK})" if self.network else "(sandboxed, no network)"


@dataclass
class CommandSandbox:
    """The session's command sandbox. `bwrap` is None where bubblewrap cannot run here;
    `active` follows the permission mode (set by `PermissionPolicy`)."""

    path_roots: PathRoots
    bwrap: str | None
    settings: SandboxSettings = field(default_factory=SandboxSettings)
    registry: ProcessRegistry | None = None
    active: bool = False

    def plan(self, needs: Sequence[str]) -> CommandPlan:
        """How a call declaring `needs` runs under the current mode."""
        beyond = tuple(
            n for n in NEEDS if n in needs and not (n == "network" and self.settings.network)
        )
        if not self.active or self.bwrap is None:
            return CommandPlan(confined=False, beyond=beyond)
        if "write_outside" in beyond:
            return CommandPlan(confined=False, beyond=beyond)
        return CommandPlan(
            confined=True, network=self.settings.network or "network" in needs, beyond=beyond
        )

    def writable(self) -> list[str]:
        """The directories a confined command may write (besides its private /tmp)."""
        return writable_roots(self.path_roots.roots, self.settings.writable)

    def confined_argv(self, argv: list[str], network: bool) -> list[str]:
        """`argv` as it runs confined, in the session's cwd (a background command's)."""
        assert self.bwrap is not None, "plan() confines only where bwrap works"
        cwd = self.path_roots.cwd
        return confine(argv, bwrap=self.bwrap, cwd=cwd, writable=self.writable(), network=network)

    async def run(
        self,
        command: str,
        network: bool,
        timeout: float | None,  # noqa: ASYNC109 - expiry kills the command and is reported
        signal: TurnSignal,
        watch: CommandWatch | None = None,
    ) -> CommandResult:
        """Run `command` confined, in the session's cwd (`watch` sees its output)."""
        assert self.bwrap is not None, "plan() confines only where bwrap works"
        bwrap = self.bwrap
        roots = self.writable()
        cwd = self.path_roots.cwd

        def wrap(argv: list[str]) -> list[str]:
            return confine(argv, bwrap=bwrap, cwd=cwd, writable=roots, network=network)

        runner = LocalCommands(registry=self.registry, wrap=wrap)
        return await runner.run(command, cwd, timeout, signal, watch)


_READ_ONLY = re.compile(r"read-only file system|EROFS", re.IGNORECASE)
_NO_NETWORK = re.compile(
    r"network is unreachable|could not resolve host|temporary failure in name resolution|"
    r"name or service not known|connection refused|"
    r"ENETUNREACH|ECONNREFUSED|EAI_AGAIN|getaddrinfo",
    re.IGNORECASE,
)


def refusal_note(output: str, plan: CommandPlan, roots: Sequence[str]) -> str | None:
    """What to tell the model when a confined command failed on what the sandbox refused."""
    if not plan.confined:
        return None
    notes: list[str] = []
    if _READ_ONLY.search(output):
        notes.append(
            "the sandbox refused a write outside the writable directories "
            f"({', '.join(roots)} and a private /tmp); if the command must write there, run "
            'it again with needs: ["write_outside"] (the user is asked)'
        )
    if not plan.network and _NO_NETWORK.search(output):
        notes.append(
            "the sandbox has no network (its 127.0.0.1 is its own: nothing of the host listens "
            'there); if the command needs the network, run it again with needs: ["network"] '
            "(the user is asked)"
        )
    return f"[{'; '.join(notes)}]" if notes else None
