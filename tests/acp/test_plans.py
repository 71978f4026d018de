"""How the agent's plan is shown (acp_server/acp/plans.py): `plan` to every client, or, to one
that advertised `clientCapabilities.plan`, `plan_update` with the plan's id and `plan_removed`
when a shown plan is emptied; replay ends in the state the live session did. Through the real
process: tests/e2e/test_plan_operations.py."""

from __future__ import annotations

import msgspec

from acp_protocol.initialize import ClientCapabilities
from acp_protocol.newer import NewerClientCapabilities
from acp_protocol.plan_operations import PlanItems, PlanRemoved, PlanUpdate
from acp_protocol.session_update import Plan, PlanEntry
from acp_server.acp.plans import PLAN_ID, Entry, PlanView, shows_plan_operations, view_after
from acp_server.session import records as rec

STEPS: list[Entry] = [("read the code", "high", "completed"), ("fix it", "medium", "pending")]
SHOWN = [PlanEntry(content=c, priority=p, status=s) for c, p, s in STEPS]


def plan_record(entries: list[Entry]) -> rec.PlanRecord:
    return rec.PlanRecord(
        turn_id="t1",
        entries=[rec.PlanEntryRecord(content=c, priority=p, status=s) for c, p, s in entries],
        at="2026-12-06T00:00:00Z",
    )


def test_only_a_client_that_advertised_plan_gets_plan_operations() -> None:
    opted_in = msgspec.json.decode(b'{"plan": {}}', type=NewerClientCapabilities)
    assert shows_plan_operations(opted_in)
    assert not shows_plan_operations(NewerClientCapabilities())
    assert not shows_plan_operations(ClientCapabilities())


def test_without_operations_every_change_is_a_whole_plan_even_an_empty_one() -> None:
    view = PlanView(operations=False)
    assert view.update(STEPS) == Plan(entries=SHOWN)
    assert view.update([]) == Plan(entries=[])


def test_with_operations_a_plan_is_updated_by_id_and_removed_once_when_emptied() -> None:
    view = PlanView(operations=True)
    assert view.update([]) is None  # nothing shown yet: nothing to remove
    assert view.update(STEPS) == PlanUpdate(plan=PlanItems(plan_id=PLAN_ID, entries=SHOWN))
    assert view.update([]) == PlanRemoved(plan_id=PLAN_ID)
    assert view.update([]) is None


def test_replay_leaves_the_view_where_the_live_session_left_it() -> None:
    shown = view_after([plan_record(STEPS)], operations=True)
    assert shown.shown
    assert shown.update([]) == PlanRemoved(plan_id=PLAN_ID)
    emptied = view_after([plan_record(STEPS), plan_record([])], operations=True)
    assert not emptied.shown
    assert emptied.update([]) is None
