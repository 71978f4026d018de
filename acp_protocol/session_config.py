"""Session modes (legacy) and session configuration options."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire

__all__ = [
    "SessionConfigBoolean",
    "SessionConfigOption",
    "SessionConfigOptionCategory",
    "SessionConfigSelect",
    "SessionConfigSelectOption",
    "SessionMode",
    "SessionModeState",
]


class SessionMode(Wire, frozen=True, kw_only=True):
    """A mode the agent can operate in."""

    id: str
    name: str
    description: str | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionModeState(Wire, frozen=True, kw_only=True):
    """The `modes` of a session: the current mode and the available ones."""

    current_mode_id: str
    available_modes: list[SessionMode]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


SessionConfigOptionCategory: TypeAlias = (
    Literal["mode", "model", "model_config", "thought_level"] | str
)
"""Open set: clients must tolerate unknown categories (custom ones start with `_`)."""


# The schema's `options` is `SessionConfigSelectOption[] | SessionConfigSelectGroup[]`. msgspec
# cannot decode a union of two array types, so one Struct holds both shapes: an option (`value`
# set) or a group (`group` and `options` set). `SessionConfigSelect` checks the combination.
class SessionConfigSelectOption(Wire, frozen=True, kw_only=True):
    """A value of a select option, or (with `group` and `options`) a named group of values."""

    name: str
    value: str | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    group: str | UnsetType = UNSET
    options: list[SessionConfigSelectOption] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")

    @property
    def is_group(self) -> bool:
        return self.group is not UNSET


def _check_select_options(options: list[SessionConfigSelectOption]) -> None:
    groups = [item.is_group for item in options]
    if any(groups) and not all(groups):
        raise ValueError("select options must be all values or all groups")
    for item in options:
        if item.is_group:
            if item.options is UNSET or item.value is not UNSET:
                raise ValueError("a select group needs `options` and no `value`")
            for child in item.options:
                if child.is_group or child.value is UNSET:
                    raise ValueError("a select group may only contain values")
        elif item.value is UNSET or item.options is not UNSET:
            raise ValueError("a select option needs `value` and no `options`")


class _SessionConfigOptionBase(Wire, frozen=True, kw_only=True):
    id: str
    name: str
    description: str | UnsetType | None = UNSET
    category: SessionConfigOptionCategory | UnsetType | None = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionConfigSelect(
    _SessionConfigOptionBase, frozen=True, kw_only=True, tag_field="type", tag="select"
):
    """A config option with one value chosen among `options`."""

    current_value: str
    options: list[SessionConfigSelectOption]

    def __post_init__(self) -> None:
        _check_select_options(self.options)


class SessionConfigBoolean(
    _SessionConfigOptionBase, frozen=True, kw_only=True, tag_field="type", tag="boolean"
):
    """An on/off config option. Send it only to clients advertising boolean config options."""

    current_value: bool


SessionConfigOption: TypeAlias = SessionConfigSelect | SessionConfigBoolean
