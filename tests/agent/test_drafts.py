"""A call shown while the model wrote it always ends on the client's side: when the turn is
cancelled before it starts, it ends `failed` (the journal balances it as `not_run`)."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from acp_server.agent import AgentEvent, ToolCallDrafted, ToolCallProgress
from acp_server.agent.seams import Seams
from acp_server.cancellation import TurnSignal
from acp_server.models.base import ToolCallDraft, ToolCallEvent, ToolCallRequest
from acp_server.session import records as rec
from acp_server.verdicts import Deny
from tests.support.agent_harness import FakeModel, FakeTool, finish, running_agent, text

pytestmark = pytest.mark.anyio


def drafted_call(call_id: str) -> list[object]:
    return [
        ToolCallDraft(call_id=call_id, name="probe"),
        ToolCallDraft(call_id=call_id, name="probe", arguments="{}"),
    ]


async def test_a_drafted_call_the_turn_never_starts_ends_failed() -> None:
    events: list[AgentEvent] = []
    stream = [
        *drafted_call("c1"),
        *drafted_call("c2"),
        ToolCallEvent(call=ToolCallRequest(call_id="c1", name="probe", arguments={})),
        ToolCallEvent(call=ToolCallRequest(call_id="c2", name="probe", arguments={})),
        finish("tool_calls"),
    ]
    seams = Seams()
    holder: list[object] = []

    async def cancel_on_first(call: ToolCallRequest, signal: TurnSignal) -> Deny | None:
        holder[0].cancel()  # type: ignore[attr-defined]
        await anyio.lowlevel.checkpoint()
        return None

    seams.approval.append(cancel_on_first)
    model = FakeModel(stream)  # type: ignore[arg-type]
    async with running_agent(model, tools=[FakeTool("probe")], seams=seams) as handle:
        holder.append(handle.agent)

        async def sink(event: AgentEvent) -> None:
            events.append(event)

        handle.agent.subscribe(sink)
        assert await handle.agent.followup(text("go")).wait() == rec.Aborted()
    shown = [e.call_id for e in events if isinstance(e, ToolCallDrafted) and e.first]
    assert len(set(shown)) == 2 and not {"c1", "c2"} & set(shown)  # ours, not the model's
    ended = {e.call_id: e.status for e in events if isinstance(e, ToolCallProgress)}
    assert ended == dict.fromkeys(shown, "failed")
