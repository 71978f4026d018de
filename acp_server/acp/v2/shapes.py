"""Session-level data in v2's shapes, from the one description the bridge keeps (v1's Structs,
which `acp/mode_options.py` and `acp/command_listing.py` build): config options get `configId`
and `groupId`, commands their `type` tags. Pure functions; no runtime import."""

from __future__ import annotations

from msgspec import UNSET

from acp_protocol import session_config as v1
from acp_protocol import session_update as su1
from acp_protocol.v2 import config as cf
from acp_protocol.v2 import session_update as su

__all__ = ["commands", "config_options"]


def _option(item: v1.SessionConfigSelectOption) -> cf.SessionConfigSelectOption:
    if item.is_group:
        assert item.options is not UNSET and item.group is not UNSET
        return cf.SessionConfigSelectOption(
            group_id=item.group,
            name=item.name,
            options=[_option(child) for child in item.options],
        )
    return cf.SessionConfigSelectOption(
        value=item.value, name=item.name, description=item.description
    )


def config_options(options: list[v1.SessionConfigOption]) -> list[cf.SessionConfigOption]:
    """The session's config options as v2 shows them (the mode is one of them: v2 has no
    modes API)."""
    shown: list[cf.SessionConfigOption] = []
    for option in options:
        if isinstance(option, v1.SessionConfigSelect):
            shown.append(
                cf.SessionConfigSelect(
                    config_id=option.id,
                    name=option.name,
                    current_value=option.current_value,
                    options=[_option(item) for item in option.options],
                    description=option.description,
                    category=option.category,
                )
            )
        else:
            shown.append(
                cf.SessionConfigBoolean(
                    config_id=option.id,
                    name=option.name,
                    current_value=option.current_value,
                    description=option.description,
                    category=option.category,
                )
            )
    return shown


def commands(update: su1.AvailableCommandsUpdate) -> list[su.AvailableCommand]:
    """The slash commands as v2 lists them: each tagged `command`, its input tagged `text`."""
    return [
        su.AvailableCommand(
            name=command.name,
            description=command.description,
            input=su.TextCommandInput(hint=command.input.hint)
            if isinstance(command.input, su1.UnstructuredCommandInput)
            else UNSET,
        )
        for command in update.available_commands
    ]
