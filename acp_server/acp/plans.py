"""How the agent's plan (`todo_write`, one plan per session) is shown: `plan` as always, or,
to a client that advertised `clientCapabilities.plan`, `plan_update` with the plan's id and
`plan_removed` when the plan is emptied. Live updates and replay go through the same
`PlanView`, so a replayed session ends in the state the live one did."""

from __future__ import annotations

from collections.abc import Sequence

from acp_protocol.initialize import ClientCapabilities
from acp_protocol.newer import NewerClientCapabilities, NewerSessionUpdate
from acp_protocol.plan_operations import PlanCapabilities, PlanItems, PlanRemoved, PlanUpdate
from acp_protocol.session_update import Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus
from acp_server.session import records as rec

PLAN_ID = "todo"
"""The id of the session's one plan (the `todo_write` list)."""

Entry = tuple[str, PlanEntryPriority, PlanEntryStatus]
"""(content, priority, status) of one plan entry."""


def shows_plan_operations(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised `clientCapabilities.plan`."""
    return isinstance(capabilities, NewerClientCapabilities) and isinstance(
        capabilities.plan, PlanCapabilities
    )


class PlanView:
    """The plan as one client sees it. `shown`: a `plan_update` is on screen (so emptying
    the plan removes it; emptying a plan never shown sends nothing)."""

    def __init__(self, operations: bool, shown: bool = False) -> None:
        self.operations = operations
        self.shown = shown

    def update(self, entries: Sequence[Entry]) -> NewerSessionUpdate | None:
        """The update that shows the plan replaced by `entries` (None: nothing to show)."""
        listed = [PlanEntry(content=c, priority=p, status=s) for c, p, s in entries]
        if not self.operations:
            return Plan(entries=listed)
        if listed:
            self.shown = True
            return PlanUpdate(plan=PlanItems(plan_id=PLAN_ID, entries=listed))
        if self.shown:
            self.shown = False
            return PlanRemoved(plan_id=PLAN_ID)
        return None


def view_after(records: Sequence[rec.Record], operations: bool) -> PlanView:
    """The plan view of a client that has seen `records` shown (replayed, or live)."""
    view = PlanView(operations)
    for record in records:
        if isinstance(record, rec.PlanRecord):
            view.update([(e.content, e.priority, e.status) for e in record.entries])
    return view
