"""Custom slash commands on the wire: advertised with the built-ins in
`available_commands_update`, scanned again at every prompt (a new update only when the list
changed), a name clash with a built-in and a repository's file replacing the user's own told to
the user once, and `/NAME args` turned into the user's prompt.
The files are read by `acp_server/tools/custom_commands.py`, listed by `command_listing.py`; see
docs/rfc/implemented/feature/2026-12-01-custom-commands.md."""

from __future__ import annotations

import logging

from acp_server.printable import one_line
from acp_server.tools.toolbox import CommandScan, CommandUnreadable, expand_command

from .command_listing import advertise
from .context import BridgeContext
from .sessions import AcpSession

log = logging.getLogger(__name__)


async def refresh_commands(
    context: BridgeContext, session: AcpSession, *, in_prompt: bool
) -> CommandScan:
    """Scan again; advertise the commands if they changed (always when not `in_prompt`: a
    loaded or resumed session), and tell the user once per session about a file that a
    built-in command overrides, and about a repository's file that overrides their own
    command or skill (a notice; without notices, a message in the conversation at a prompt)."""
    scan = await advertise(context, session.id, session.cwd, always=not in_prompt)
    told = context.clashes_told.get(session.id, frozenset())
    clashes = [name for name in scan.clashes if name not in told]
    if clashes:
        names = ", ".join(f"/{name}" for name in clashes)
        text = (
            f"Custom command file(s) for {names} ignored: the built-in command of that name "
            "wins. Rename the file to use it."
        )
        if await _tell(context, session, "Custom command ignored", text, in_prompt=in_prompt):
            told |= set(clashes)
    for shadowing in scan.shadowed:
        key = f"{shadowing.name} {shadowing.repository_file}"
        if key in told:
            continue
        text = (
            f"/{shadowing.name} in this session is the repository's "
            f"{one_line(str(shadowing.repository_file))}, not your own "
            f"{one_line(str(shadowing.user_file))}: a repository's command or skill wins over "
            "yours of the same name. Rename one of them to keep both."
        )
        if await _tell(context, session, "Your command is replaced", text, in_prompt=in_prompt):
            told |= {key}
    context.clashes_told[session.id] = told
    return scan


async def _tell(
    context: BridgeContext, session: AcpSession, title: str, text: str, *, in_prompt: bool
) -> bool:
    """A warning for the user: a notice, else (at a prompt) a message; whether it was told."""
    log.warning("session %s: %s", session.id, text)
    if await context.presenter.notice(session.id, "warning", title, text):
        return True
    if not in_prompt:
        return False
    await context.presenter.say(session.id, text, context.ids("cmd"))
    return True


def custom_invocation(text: str, scan: CommandScan) -> tuple[str, str] | None:
    """(`name`, `arguments`) when a prompt is `/NAME args` of a custom command, else None."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    head, _, arguments = stripped[1:].partition(" ")
    name, _, more = head.partition("\n")
    if more:
        arguments = f"{more}\n{arguments}" if arguments else more
    if name not in scan.commands:
        return None
    return name, arguments.strip()


def expand(scan: CommandScan, name: str, arguments: str) -> str:
    """The prompt text of `/name arguments`; raises `CommandUnreadable` with the reason."""
    return expand_command(scan.commands[name], arguments)


__all__ = ["CommandUnreadable", "custom_invocation", "expand", "refresh_commands"]
