"""Permission modes on the wire: ACP `modes` and the `mode` config option, kept in sync,
`session/set_mode`, `session/set_config_option`, and the `/mode` slash command."""

from __future__ import annotations

from collections.abc import Sequence

from acp_server.tools.permissions import MODES, Mode
from protocol.session_config import (
    SessionConfigOption,
    SessionConfigSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)
from protocol.session_update import (
    AvailableCommand,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)

MODE_OPTION_ID = "mode"


def mode_state(current: Mode) -> SessionModeState:
    """The `modes` of a session response."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=m.id, name=m.name, description=m.description) for m in MODES
        ],
    )


MODEL_OPTION_ID = "model"


def config_options(
    current: Mode, model: str | None = None, offered: Sequence[str] = ()
) -> list[SessionConfigOption]:
    """Every config option of a session (complete list, as ACP requires each time)."""
    options: list[SessionConfigOption] = [
        SessionConfigSelect(
            id=MODE_OPTION_ID,
            name="Mode",
            description="What the agent may do without asking",
            category="mode",
            current_value=current,
            options=[
                SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
                for m in MODES
            ],
        )
    ]
    if model is not None and offered:
        options.append(
            SessionConfigSelect(
                id=MODEL_OPTION_ID,
                name="Model",
                description="The model that answers; a switch applies from the next request",
                category="model",
                current_value=model,
                options=[SessionConfigSelectOption(value=spec, name=spec) for spec in offered],
            )
        )
    return options


COMMANDS = AvailableCommandsUpdate(
    available_commands=[
        AvailableCommand(
            name="mode",
            description="Switch the permission mode: " + ", ".join(m.id for m in MODES),
            input=UnstructuredCommandInput(hint="default | accept_edits | read_only | bypass"),
        ),
        AvailableCommand(
            name="compact",
            description="Compact the conversation now: summarize all but the latest turns",
            input=UnstructuredCommandInput(hint="optional: what the summary should keep"),
        ),
    ]
)


def slash_command(text: str) -> tuple[str, str] | None:
    """(`name`, `argument`) when a prompt is one of our slash commands, else None."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, _, argument = stripped[1:].partition(" ")
    if name not in {c.name for c in COMMANDS.available_commands}:
        return None
    return name, argument.strip()
