"""The slash commands a session is shown: the built-ins, then the custom commands found in
`.acp-server/commands/` and the user's config dir (`acp_server/tools/custom_commands.py`).

Light on purpose (no runtime imports): `session/new` sends the list right after its answer,
before the runtime is loaded (acp/opening.py). What each session was last shown is kept in the
connection's context, so a prompt sends a new list only when the files changed. See
docs/rfc/implemented/feature/2026-12-01-custom-commands.md.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import UNSET

from acp_protocol.session_update import (
    AvailableCommand,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)
from acp_server.agent import user_instructions_file

from .context import BridgeContext
from .mode_options import COMMANDS, MODEL_COMMAND, available_commands

if TYPE_CHECKING:
    from acp_server.tools.toolbox import CommandScan, SkillPlaces

log = logging.getLogger(__name__)

BUILTIN_NAMES = frozenset([*(c.name for c in COMMANDS.available_commands), MODEL_COMMAND.name])
"""Reserved even when `/model` is not offered, so a file means the same on every setup."""


def scan_for(session_id: str, cwd: str, places: SkillPlaces) -> CommandScan:
    """The custom commands and skills (from `places`) of `cwd` and the user's config dir,
    read now."""
    # Here, not at the top: `session/new` is answered before the scan, which is the first
    # thing to need the files' readers (the ready-before-the-runtime RFC).
    from acp_server.tools.toolbox import CommandScan, scan_commands, user_commands_dir

    try:
        user_dir = user_commands_dir(user_instructions_file())
        return scan_commands(Path(cwd), user_dir, BUILTIN_NAMES, places)
    except (OSError, RuntimeError, ValueError, RecursionError) as exc:
        # A hostile repository may lose its commands, never the session.
        log.warning("session %s: reading custom commands failed: %s", session_id, exc)
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


async def advertise(
    context: BridgeContext, session_id: str, cwd: str, *, always: bool
) -> CommandScan:
    """Scan; send the list if `always` or if it differs from what the session was last shown."""
    scan = scan_for(session_id, cwd, context.options.tools.skills)
    for note in scan.notes:
        log.warning("session %s: custom command %s", session_id, note)
    listing = scan.listing()
    if always or context.commands_shown.get(session_id) != listing:
        context.commands_shown[session_id] = listing
        update = commands_update(context.options.offered_models, scan)
        await context.presenter.commands(session_id, update)
    return scan
