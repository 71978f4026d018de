"""Custom slash commands on the wire: advertised with the built-ins in
`available_commands_update`, scanned again at every prompt (a new update only when the list
changed), a name clash told to the user once, and `/NAME args` turned into the user's prompt.
The files are read by `acp_server/tools/custom_commands.py`, listed by `command_listing.py`; see
docs/rfc/implemented/feature/2026-12-01-custom-commands.md."""

from __future__ import annotations

import logging

from acp_protocol.content import TextContent
from acp_protocol.session_update import AgentMessageChunk
from acp_server.tools.toolbox import CommandScan, CommandUnreadable, expand_command

from .command_listing import advertise
from .context import BridgeContext
from .notices import send_notice
from .sessions import AcpSession
from .updates import SessionUpdates

log = logging.getLogger(__name__)


async def refresh_commands(
    context: BridgeContext, session: AcpSession, *, in_prompt: bool
) -> CommandScan:
    """Scan again; advertise the commands if they changed (always when not `in_prompt`: a
    loaded or resumed session), and tell the user about a clash with a built-in once per
    session (a notice; without notices, a message in the conversation at a prompt)."""
    scan = await advertise(context, session.id, session.cwd, always=not in_prompt)
    told_before = context.clashes_told.get(session.id, frozenset())
    new_clashes = [name for name in scan.clashes if name not in told_before]
    if new_clashes:
        names = ", ".join(f"/{name}" for name in new_clashes)
        text = (
            f"Custom command file(s) for {names} ignored: the built-in command of that name "
            "wins. Rename the file to use it."
        )
        log.warning("session %s: %s", session.id, text)
        told = await send_notice(context, session.id, "warning", "Custom command ignored", text)
        if not told and in_prompt:
            await SessionUpdates(context.peer, session.id).send(
                AgentMessageChunk(content=TextContent(text=text), message_id=context.ids("cmd"))
            )
            told = True
        if told:
            context.clashes_told[session.id] = told_before | set(new_clashes)
    return scan


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
