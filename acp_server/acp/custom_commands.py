"""Custom slash commands on the wire: advertised with the built-ins in
`available_commands_update`, scanned again at every prompt (a new update only when the list
changed), a name clash told to the user once, and `/NAME args` turned into the user's prompt.
The files are read by `acp_server.agent.custom_commands`; see
docs/rfc/implemented/feature/2026-12-01-custom-commands.md."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from msgspec import UNSET

from acp_protocol.content import TextContent
from acp_protocol.session_update import (
    AgentMessageChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)
from acp_server.agent import (
    CommandScan,
    CommandUnreadable,
    expand_command,
    scan_commands,
    user_commands_dir,
    user_instructions_file,
)
from acp_server.session import records as rec

from .context import BridgeContext
from .modes import COMMANDS, MODEL_COMMAND, available_commands
from .notices import send_notice
from .sessions import AcpSession
from .updates import SessionUpdates

log = logging.getLogger(__name__)

BUILTIN_NAMES = frozenset([*(c.name for c in COMMANDS.available_commands), MODEL_COMMAND.name])
"""Reserved even when `/model` is not offered, so a file means the same on every setup."""


def scan_for(session: AcpSession) -> CommandScan:
    """The custom commands of the session's cwd and the user's config dir, read now."""
    try:
        return scan_commands(
            Path(session.cwd), user_commands_dir(user_instructions_file()), BUILTIN_NAMES
        )
    except (OSError, RuntimeError, ValueError, RecursionError) as exc:
        # A hostile repository may lose its commands, never the session.
        log.warning("session %s: reading custom commands failed: %s", session.id, exc)
        return CommandScan(notes=(f"custom commands were not read: {exc}",))


def commands_update(offered_models: Sequence[str], scan: CommandScan) -> AvailableCommandsUpdate:
    """The built-ins, then the custom commands by name."""
    builtins = available_commands(offered_models).available_commands
    custom = [
        AvailableCommand(
            name=name,
            description=description,
            input=UnstructuredCommandInput(hint=hint) if hint else UNSET,
        )
        for name, description, hint in scan.listing()
    ]
    return AvailableCommandsUpdate(available_commands=[*builtins, *custom])


async def refresh_commands(
    context: BridgeContext, session: AcpSession, *, in_prompt: bool
) -> CommandScan:
    """Scan again; advertise the commands if they are new or changed, and tell the user about
    a clash with a built-in once (a notice; without notices, a message in the conversation at
    the next prompt)."""
    scan = scan_for(session)
    updates = SessionUpdates(context.peer, session.id)
    if session.commands_shown != scan.listing():
        session.commands_shown = scan.listing()
        await updates.send(commands_update(context.options.offered_models, scan))
    for note in scan.notes:
        log.warning("session %s: custom command %s", session.id, note)
    new_clashes = [name for name in scan.clashes if name not in session.clashes_told]
    if new_clashes:
        names = ", ".join(f"/{name}" for name in new_clashes)
        text = (
            f"Custom command file(s) for {names} ignored: the built-in command of that name "
            "wins. Rename the file to use it."
        )
        log.warning("session %s: %s", session.id, text)
        told = await send_notice(context, session.id, "warning", "Custom command ignored", text)
        if not told and in_prompt:
            await updates.send(
                AgentMessageChunk(content=TextContent(text=text), message_id=_id(context))
            )
            told = True
        if told:
            session.clashes_told = session.clashes_told | set(new_clashes)
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


def _id(context: BridgeContext) -> str:
    ids = context.options.ids
    return ids("cmd") if ids is not None else f"cmd_{rec.utc_now()}"


__all__ = [
    "BUILTIN_NAMES",
    "CommandUnreadable",
    "commands_update",
    "custom_invocation",
    "expand",
    "refresh_commands",
    "scan_for",
]
