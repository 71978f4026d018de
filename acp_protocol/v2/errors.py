"""The `data` of two v2 errors: an unsupported protocol version (-32022) and a session that is
not found (-32002). The codes are in `acp_protocol.errors`."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..base import Wire

__all__ = ["SessionNotFoundErrorData", "UnsupportedProtocolVersionErrorData"]


class UnsupportedProtocolVersionErrorData(Wire, frozen=True, kw_only=True):
    """`initialize` asked for a version below every supported one."""

    requested: int
    supported: list[int]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class SessionNotFoundErrorData(Wire, frozen=True, kw_only=True):
    """No session with this id."""

    session_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
