"""The base class of every ACP wire type, and the `$/cancel_request` params.

Conventions used throughout `protocol/`:

* Attributes are the snake_case form of the wire names; `rename="camel"` maps them, and the
  `_meta` extension point is the attribute `meta` (an explicit `name="_meta"`).
* A required field has no default. An optional field defaults to `UNSET` and is left out when
  encoding. Its type includes `None` only when the schema allows `null` (`T | UnsetType | None`;
  ruff wants `None` last), so "absent" and "null" stay distinct: this matters for partial
  updates such as `ToolCallUpdate` and `SessionInfoUpdate`. Free JSON values (`raw_input`) are
  `Any = UNSET`.
* Fields for which the schema declares a default value (capability flags and objects,
  `authMethods`) use that default instead of `UNSET`. Exception: `ElicitationSchema.type`,
  whose only value is its default, is `UNSET` unless set, so a sender can choose to emit it.
* Unknown fields are ignored when decoding (msgspec's default; never set
  `forbid_unknown_fields`).
* Subclasses repeat `frozen=True, kw_only=True`: msgspec inherits them at runtime, but type
  checkers (PEP 681 `dataclass_transform`) only see options given on the class itself.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .jsonrpc import RequestId

__all__ = [
    "UNSET",
    "CancelRequestNotification",
    "RequestId",
    "UnsetType",
    "Wire",
]


class Wire(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True, frozen=True):
    """Base class of every ACP wire type."""


class CancelRequestNotification(Wire, frozen=True, kw_only=True):
    """Params of `$/cancel_request` (either direction): cancel the request with this id."""

    request_id: RequestId
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
