"""What a session response says about modes and options, and the slash commands: pure
functions of the configuration, with no runtime import, so `session/new` can be answered
before the runtime is loaded (acp/opening.py). `acp/methods/config_options.py` changes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp_protocol.session_config import (
    SessionConfigOption,
    SessionConfigSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)
from acp_protocol.session_update import (
    AvailableCommand,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)
from acp_server.tools.toolbox import MODES, Mode, ModeInfo, ModeRefused, check_mode

MODE_OPTION_ID = "mode"


def offered_modes(sandbox_available: bool) -> tuple[ModeInfo, ...]:
    """The modes offered here: sandboxed mode only where the command sandbox can run."""
    return tuple(m for m in MODES if m.id != "sandboxed" or sandbox_available)


def mode_state(current: Mode, modes: Sequence[ModeInfo] = MODES) -> SessionModeState:
    """The `modes` of a session response."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=m.id, name=m.name, description=m.description) for m in modes
        ],
    )


MODEL_OPTION_ID = "model"


def config_options(
    current: Mode,
    model: str | None = None,
    offered: Sequence[str] = (),
    modes: Sequence[ModeInfo] = MODES,
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
                for m in modes
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
            input=UnstructuredCommandInput(hint=" | ".join(m.id for m in MODES)),
        ),
        AvailableCommand(
            name="compact",
            description="Compact the conversation now: summarize all but the latest turns",
            input=UnstructuredCommandInput(hint="optional: what the summary should keep"),
        ),
        AvailableCommand(
            name="rewind",
            description="Go back to before turn N: cut the conversation and restore the files "
            "the agent's file tools changed since (without N: list the turns)",
            input=UnstructuredCommandInput(hint="optional: the turn number"),
        ),
    ]
)


MODEL_COMMAND = AvailableCommand(
    name="model",
    description="Switch the model that answers, from the next request on",
    input=UnstructuredCommandInput(hint="one of the offered model specs"),
)
"""Listed only when a model is configured: it switches like the `model` config option."""


def available_commands(offered_models: Sequence[str]) -> AvailableCommandsUpdate:
    """The slash commands of a session: `COMMANDS`, and `/model` when models are offered."""
    if not offered_models:
        return COMMANDS
    return AvailableCommandsUpdate(available_commands=[*COMMANDS.available_commands, MODEL_COMMAND])


def slash_command(text: str, offered_models: Sequence[str]) -> tuple[str, str] | None:
    """(`name`, `argument`) when a prompt is one of our slash commands, else None."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, _, argument = stripped[1:].partition(" ")
    listed = available_commands(offered_models).available_commands
    if name not in {c.name for c in listed}:
        return None
    return name, argument.strip()


def starting_mode(mode: str, bwrap: str | None, sandbox_missing: str) -> tuple[Mode, str | None]:
    """The mode a session starts in, from the mode it asks for (`--mode`, or its journal's last
    switch), where the command sandbox runs with `bwrap` (None: it cannot, `sandbox_missing`
    says why); and why it fell back to `default`, if it did."""
    if mode == "sandboxed" and bwrap is None:
        return "default", (
            "sandboxed mode is not available here, so this session runs in default mode: "
            + sandbox_missing
        )
    # A restored mode passes the same check as `session/set_mode`: a journal written where
    # bypass was allowed (a sandbox) must not bring it back where it is not (root outside one).
    try:
        return check_mode(mode), None
    except ModeRefused as exc:
        return "default", (
            f"the session's mode {mode} was not restored, so it runs in default mode: {exc}"
        )
