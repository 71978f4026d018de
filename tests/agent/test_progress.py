"""What the client sees while a model request runs (acp_server/agent/progress.py). A request
that streams nothing for a while still tells its observers it is running: `ModelWaiting` after
each quiet interval, with the request's estimated size and the window; the keep-alive stops
with the request and lets its errors through unwrapped. Calls shown as they are written
(`Drafts`): tests/agent/test_drafts.py and tests/agent/test_text_call_announcements.py."""

from __future__ import annotations

import itertools

import anyio
import pytest

from acp_server.agent import AgentConfig, AgentEvent, ModelWaiting, spawn_agent
from acp_server.cancellation import TurnSignal
from acp_server.models.base import ModelRequest
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from tests.support.agent_harness import DEADLINE, FakeModel, finish, say, text

pytestmark = pytest.mark.anyio


async def run(model: FakeModel, events: list[AgentEvent], heard: anyio.Event) -> object:
    counter = itertools.count(1)
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = spawn_agent(
                SessionLog("s1"),
                AgentConfig(model=model, alive_interval=0.05),
                tg,
                ids=lambda prefix: f"{prefix}_{next(counter)}",
            )

            async def sink(event: AgentEvent) -> None:
                events.append(event)
                if isinstance(event, ModelWaiting):
                    heard.set()

            handle.agent.subscribe(sink)
            ticket = handle.agent.followup(text("think hard"))
            await handle.agent.when_idle()
            await handle.dispose()
    return ticket.result


async def test_a_quiet_request_reports_it_is_still_running() -> None:
    waited, heard = anyio.Event(), anyio.Event()
    events: list[AgentEvent] = []

    async def quiet_until_heard(request: ModelRequest, signal: TurnSignal) -> object:
        await heard.wait()
        waited.set()
        return None

    model = FakeModel([quiet_until_heard, say("done"), finish()])
    outcome = await run(model, events, heard)
    assert outcome == rec.Completed() and waited.is_set()
    waiting = [e for e in events if isinstance(e, ModelWaiting)]
    assert waiting[0].used > 0 and waiting[0].window > waiting[0].used
    # Every keep-alive came before the answer's text: none outlived the request.
    text_at = next(i for i, e in enumerate(events) if type(e).__name__ == "MessageChunk")
    assert all(events.index(e) < text_at for e in waiting)
