"""v2 session configuration options: v1's shapes with the ids renamed (`configId`, `groupId`).

v2 has no modes API: the permission mode is a `select` option of category `mode`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..base import Wire
from ..session_config import SessionConfigOptionCategory

__all__ = [
    "SessionConfigBoolean",
    "SessionConfigOption",
    "SessionConfigSelect",
    "SessionConfigSelectOption",
]

Meta = dict[str, Any] | UnsetType | None


# One Struct for the schema's `SessionConfigSelectOption | SessionConfigSelectGroup` (msgspec
# cannot decode a union of two array types): a value (`value` set) or a group (`group_id` and
# `options` set), as in v1's `acp_protocol.session_config`.
class SessionConfigSelectOption(Wire, frozen=True, kw_only=True):
    """A value of a select option, or (with `group_id` and `options`) a named group of values."""

    name: str
    value: str | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    group_id: str | UnsetType = UNSET
    options: list[SessionConfigSelectOption] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if (self.group_id is UNSET) == (self.value is UNSET):
            raise ValueError("a select option needs `value` or (as a group) `groupId`")
        if (self.group_id is UNSET) != (self.options is UNSET):
            raise ValueError("a select group needs `groupId` and `options`, a value neither")


class SessionConfigSelect(Wire, frozen=True, kw_only=True, tag_field="type", tag="select"):
    """A config option with one value chosen among `options`."""

    config_id: str
    name: str
    current_value: str
    options: list[SessionConfigSelectOption]
    description: str | UnsetType | None = UNSET
    category: SessionConfigOptionCategory | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class SessionConfigBoolean(Wire, frozen=True, kw_only=True, tag_field="type", tag="boolean"):
    """An on/off config option."""

    config_id: str
    name: str
    current_value: bool
    description: str | UnsetType | None = UNSET
    category: SessionConfigOptionCategory | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


SessionConfigOption = SessionConfigSelect | SessionConfigBoolean
