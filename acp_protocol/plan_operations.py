"""Plan operations: `plan_update` (a plan with an id, here always an item list) and
`plan_removed`, for clients that advertise `clientCapabilities.plan: {}`; others get `plan`.

Newer than the stable schema we vendored: checked against `schema.unstable.json` (`PlanUpdate`,
`PlanItems`, `PlanRemoved`, `PlanCapabilities`; tests/protocol/test_newer.py). From
agentclientprotocol.com/rfds/plan-operations and protocol/v2/draft/agent-plan: every plan
carries a required `planId`; `plan_update` replaces the whole plan with that id;
`plan_removed` dismisses it.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire
from .session_update import PlanEntry

__all__ = ["PlanCapabilities", "PlanItems", "PlanRemoved", "PlanUpdate"]


class PlanCapabilities(Wire, frozen=True, kw_only=True):
    """`clientCapabilities.plan`: `{}` = the client takes `plan_update` and `plan_removed`."""

    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PlanItems(Wire, frozen=True, kw_only=True, tag_field="type", tag="items"):
    """A plan as structured entries: the complete list, with its id."""

    plan_id: str
    entries: list[PlanEntry]
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PlanUpdate(Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="plan_update"):
    """Replace the plan with `plan.plan_id` (create it if new)."""

    plan: PlanItems
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class PlanRemoved(Wire, frozen=True, kw_only=True, tag_field="sessionUpdate", tag="plan_removed"):
    """The plan with this id is gone."""

    plan_id: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")
