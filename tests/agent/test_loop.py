"""The loop's semantics and races: holder lifetime, cancel ordering, pre-run cancel, delivery
verbs, outcomes, balanced tool calls and the durable shape of a turn.

Races are pinned by ordering (events, listeners, ticket states), never by timing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from acp_server.agent.events import AgentEvent, Status, ToolCallAnnounced, TurnEnded
from acp_server.agent.failures import MODEL_FAILED
from acp_server.agent.inbox import Dropped, PromptTicket
from acp_server.agent.seams import PromptSubmission, Seams, StepInfo, TurnProgress
from acp_server.cancellation import CancelCause, ParentCancel, TurnSignal, UserCancel
from acp_server.models.base import ModelError, ModelRequest
from acp_server.session import records as rec
from acp_server.tools.base import ToolOutput
from tests.support.agent_harness import (
    FakeModel,
    FakeTool,
    Response,
    call,
    finish,
    gate,
    gated_model,
    gated_tool,
    hold,
    kinds,
    make_handle,
    of_type,
    request_user_texts,
    running_agent,
    say,
    text,
    turn_ends,
    user_texts,
    waiting_tool,
)

pytestmark = pytest.mark.anyio

TOOL_STEP: Response = [call("probe"), finish("tool_calls")]


def _parked(entered: anyio.Event) -> tuple[FakeModel, list[FakeTool]]:
    """A model whose first step calls `probe`, which waits on the signal (cooperative)."""
    return FakeModel(TOOL_STEP), [FakeTool("probe", waiting_tool(entered))]


def _stuck(entered: anyio.Event, release: anyio.Event) -> tuple[FakeModel, list[FakeTool]]:
    """A model whose first step calls `probe`, which ignores the signal until released."""
    return FakeModel(TOOL_STEP), [FakeTool("probe", gated_tool(entered, release))]


# --- holder lifetime ---------------------------------------------------------------------------


async def test_holder_is_installed_before_status_running() -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        causes: list[CancelCause] = []
        agent.on_cancel_requested(causes.append)

        def on_status(status: Status) -> None:
            if status == "running":
                agent.cancel()

        agent.on_status(on_status)
        ticket = agent.followup(text("cancelled as soon as it runs"))
        assert await ticket.wait() == rec.Aborted()
        assert causes == [UserCancel()]  # an active holder heard the cancel
        assert list(agent.session.records) == []  # aborted before admission: no turn opened


async def test_turn_end_observer_cannot_cancel_the_finished_turn() -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        causes: list[CancelCause] = []
        agent.on_cancel_requested(causes.append)
        seen: list[rec.Outcome] = []

        async def sink(event: AgentEvent) -> None:
            if isinstance(event, TurnEnded):
                agent.cancel()
                seen.append(event.outcome)

        agent.subscribe(sink)
        assert await agent.followup(text("hi")).wait() == rec.Completed()
        assert seen == [rec.Completed()]
        assert causes == []
        assert [end.outcome for end in turn_ends(agent.session)] == [rec.Completed()]


async def test_turn_end_record_listener_cannot_cancel_the_finished_turn() -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        causes: list[CancelCause] = []
        agent.on_cancel_requested(causes.append)

        def on_record(record: rec.Record) -> None:
            if isinstance(record, rec.TurnEndRecord):
                agent.cancel()

        agent.session.on_append(on_record)
        assert await agent.followup(text("hi")).wait() == rec.Completed()
        assert causes == []


async def test_cancel_during_a_blocked_durability_flush_has_no_authority() -> None:
    flushing = anyio.Event()
    release = anyio.Event()

    async def flush() -> None:
        flushing.set()
        await hold(release)  # bounded: the close is shielded from the harness's deadline

    async with running_agent(FakeModel(), flush=flush) as handle:
        agent = handle.agent
        causes: list[CancelCause] = []
        agent.on_cancel_requested(causes.append)
        ticket = agent.followup(text("hi"))
        await flushing.wait()
        assert kinds(agent.session)[-1] == "turn/end"
        agent.cancel()
        assert ticket.result is None  # the ticket settles only after the flush
        release.set()
        assert await ticket.wait() == rec.Completed()
        assert causes == []
        assert [end.outcome for end in turn_ends(agent.session)] == [rec.Completed()]


# --- idle and pre-run cancel -------------------------------------------------------------------


async def test_idle_cancel_is_a_noop_that_arms_nothing() -> None:
    model = FakeModel()
    async with running_agent(model) as handle:
        agent = handle.agent
        causes: list[CancelCause] = []
        agent.on_cancel_requested(causes.append)
        agent.cancel()
        agent.cancel(ParentCancel())
        assert causes == []
        assert await agent.followup(text("after idle cancel")).wait() == rec.Completed()
        assert not model.signals[0].aborted
        assert causes == []


async def test_pre_run_cancel_drops_exactly_the_queued_work() -> None:
    model = FakeModel()
    async with running_agent(model) as handle:
        agent = handle.agent
        dropped = agent.followup(text("queued, then cancelled"))
        agent.cancel()  # synchronously: the driver has not claimed it yet
        later = agent.followup(text("queued after the cancel"))
        assert await dropped.wait() == Dropped()
        assert await later.wait() == rec.Completed()
        assert user_texts(agent.session) == ["queued after the cancel"]
        assert len(turn_ends(agent.session)) == 1
        assert not model.signals[0].aborted


async def test_pre_run_cancel_with_keep_inbox_drops_nothing() -> None:
    async with running_agent(FakeModel()) as handle:
        agent = handle.agent
        kept = agent.followup(text("kept"))
        agent.cancel(keep_inbox=True)
        assert await kept.wait() == rec.Completed()


# --- cancel-requested ordering -----------------------------------------------------------------


async def test_cancel_requested_fires_before_work_is_cleared_and_before_the_abort() -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        first = agent.followup(text("running"))
        await entered.wait()
        queued = agent.followup(text("queued"))
        agent.steer(text("steering"))
        signal = model.signals[0]
        observed: list[tuple[object, bool, int]] = []

        def listener(cause: CancelCause) -> None:
            steering = len(agent._loop.inbox.steering)  # white-box: steering has no public view
            observed.append((queued.result, signal.aborted, steering))

        agent.on_cancel_requested(listener)
        agent.cancel()
        assert observed == [(None, False, 1)]
        assert queued.result == Dropped()
        assert signal.aborted
        assert await first.wait() == rec.Aborted()
        assert "steering" not in user_texts(agent.session)
        assert "queued" not in user_texts(agent.session)


async def test_failing_cancel_requested_listener_cannot_veto_the_stop() -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        heard: list[CancelCause] = []

        def explode(cause: CancelCause) -> None:
            raise RuntimeError("listener failure")

        agent.on_cancel_requested(explode)
        agent.on_cancel_requested(heard.append)
        first = agent.followup(text("running"))
        await entered.wait()
        queued = agent.followup(text("queued"))
        agent.cancel(ParentCancel())
        assert heard == [ParentCancel()]
        assert await first.wait() == rec.Aborted()
        assert await queued.wait() == Dropped()


async def test_work_queued_by_a_cancel_requested_listener_is_cleared() -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        queued: list[PromptTicket] = []
        agent.on_cancel_requested(lambda cause: queued.append(agent.followup(text("late"))))
        first = agent.followup(text("running"))
        await entered.wait()
        agent.cancel()
        assert await first.wait() == rec.Aborted()
        assert await queued[0].wait() == Dropped()
        await agent.when_idle()
        assert "late" not in user_texts(agent.session)


async def test_work_queued_by_an_abort_callback_belongs_to_the_next_turn() -> None:
    queued: list[PromptTicket] = []
    entered = anyio.Event()
    agent_box: list[Any] = []

    async def tool_behaviour(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        signal.on_abort(lambda: queued.append(agent_box[0].followup(text("from on_abort"))))
        entered.set()
        await signal.wait()
        signal.raise_if_aborted()
        return ToolOutput("unreachable")

    async with running_agent(FakeModel(TOOL_STEP), tools=[FakeTool("probe", tool_behaviour)]) as h:
        agent = h.agent
        agent_box.append(agent)
        first = agent.followup(text("running"))
        await entered.wait()
        agent.cancel()
        assert len(queued) == 1
        assert await first.wait() == rec.Aborted()
        assert await queued[0].wait() == rec.Completed()
        assert user_texts(agent.session, "prompt") == ["running", "from on_abort"]


async def test_work_queued_after_cancel_returns_runs_as_the_next_turn() -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        first = agent.followup(text("running"))
        await entered.wait()
        agent.cancel()
        after = agent.followup(text("after the cancel"))
        assert await first.wait() == rec.Aborted()
        assert await after.wait() == rec.Completed()
        assert [end.outcome for end in turn_ends(agent.session)] == [
            rec.Aborted(),
            rec.Completed(),
        ]


async def test_running_listener_cancel_and_replacement_gets_a_fresh_holder() -> None:
    seams = Seams()
    submitted: list[TurnSignal] = []

    async def on_submit(submission: PromptSubmission, signal: TurnSignal) -> None:
        submitted.append(signal)

    seams.prompt_submit.append(on_submit)
    model = FakeModel()
    async with running_agent(model, seams=seams) as handle:
        agent = handle.agent
        replacement: list[PromptTicket] = []

        def on_status(status: Status) -> None:
            if status == "running" and not replacement:
                agent.cancel()
                replacement.append(agent.followup(text("replacement")))

        agent.on_status(on_status)
        idle_snapshots: list[object] = []

        async def observe_idle() -> None:
            await agent.when_idle()
            idle_snapshots.append(replacement[0].result if replacement else "no replacement")

        original = agent.followup(text("original"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(observe_idle)
        assert await original.wait() == rec.Aborted()
        # when_idle() did not resolve between the cancel and the replacement's turn
        assert idle_snapshots == [rec.Completed()]
        assert await replacement[0].wait() == rec.Completed()
        assert len(submitted) == 1  # only the replacement was admitted...
        assert not submitted[0].aborted  # ...under a fresh, live signal
        assert user_texts(agent.session) == ["replacement"]


async def test_keep_inbox_aborts_the_turn_and_keeps_queued_prompts_in_order() -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        first = agent.followup(text("running"))
        await entered.wait()
        second = agent.followup(text("second"))
        third = agent.followup(text("third"))
        agent.cancel(keep_inbox=True)
        assert await first.wait() == rec.Aborted()
        assert await second.wait() == rec.Completed()
        assert await third.wait() == rec.Completed()
        assert user_texts(agent.session, "prompt") == ["running", "second", "third"]
        assert [end.outcome for end in turn_ends(agent.session)] == [
            rec.Aborted(),
            rec.Completed(),
            rec.Completed(),
        ]


async def test_a_cancel_for_an_aborted_turn_does_not_start_another_step() -> None:
    """A tool that returns normally after the abort does not earn the model another request."""
    entered = anyio.Event()
    release = anyio.Event()
    model, tools = _stuck(entered, release)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        ticket = agent.followup(text("go"))
        await entered.wait()
        agent.cancel()
        release.set()
        assert await ticket.wait() == rec.Aborted()
        assert len(model.requests) == 1
        assert kinds(agent.session).count("step/start") == 1


async def test_cancel_arriving_while_a_tool_call_is_announced_keeps_the_tool_from_running() -> None:
    tool = FakeTool("probe")
    async with running_agent(FakeModel(TOOL_STEP), tools=[tool]) as handle:
        agent = handle.agent

        async def sink(event: AgentEvent) -> None:
            if isinstance(event, ToolCallAnnounced):
                agent.cancel()  # e.g. the client's cancel arrives while the bridge writes

        agent.subscribe(sink)
        assert await agent.followup(text("go")).wait() == rec.Aborted()
        assert tool.runs == []
        (result,) = of_type(agent.session, rec.ToolResult)
        assert result.synthetic == "not_run"


# --- cancel versus dispose, cooperation ----------------------------------------------------------


async def test_dispose_after_a_user_cancel_ends_the_turn_disposed() -> None:
    entered = anyio.Event()
    release = anyio.Event()
    model, tools = _stuck(entered, release)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            handle = make_handle(tg, model, tools=tools)
            agent = handle.agent
            ticket = agent.followup(text("go"))
            await entered.wait()
            agent.cancel()  # the user cause wins the signal's reason...
            tg.start_soon(handle.dispose)
            await wait_all_tasks_blocked()
            assert ticket.result is None
            release.set()
            # ...but the lifecycle is checked first: disposal wins the outcome.
            assert await ticket.wait() == rec.DisposedOutcome()
            assert model.signals[0].reason == UserCancel()
    assert [end.outcome for end in turn_ends(agent.session)] == [rec.DisposedOutcome()]
    assert agent.status == "disposed"


async def test_dispose_during_a_turn_ends_it_disposed() -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            handle = make_handle(tg, model, tools=tools)
            agent = handle.agent
            ticket = agent.followup(text("go"))
            queued = agent.followup(text("queued"))
            await entered.wait()
            await handle.dispose()
            assert ticket.result == rec.DisposedOutcome()
            assert queued.result == Dropped()
    assert [end.outcome for end in turn_ends(agent.session)] == [rec.DisposedOutcome()]


async def test_uncooperative_tool_delays_turn_end_and_when_idle() -> None:
    entered = anyio.Event()
    release = anyio.Event()
    model, tools = _stuck(entered, release)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        ticket = agent.followup(text("go"))
        await entered.wait()
        agent.cancel()
        idle: list[bool] = []

        async def wait_idle() -> None:
            await agent.when_idle()
            idle.append(tools[0].finished != [])

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_idle)
            await wait_all_tasks_blocked()
            assert idle == []  # the cancelled turn has not ended: the tool still runs
            assert ticket.result is None
            assert agent.status == "running"
            assert "turn/end" not in kinds(agent.session)
            release.set()
        assert idle == [True]
        assert ticket.result == rec.Aborted()


async def test_dispose_returns_only_after_an_uncooperative_listener_finished() -> None:
    entered = anyio.Event()
    release = anyio.Event()
    finished: list[bool] = []

    async def stubborn(info: StepInfo, signal: TurnSignal) -> None:
        entered.set()
        await release.wait()
        finished.append(signal.aborted)

    seams = Seams(pre_step=[stubborn])
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            handle = make_handle(tg, FakeModel(), seams=seams)
            agent = handle.agent
            ticket = agent.followup(text("go"))
            await entered.wait()
            disposed: list[bool] = []

            async def dispose() -> None:
                await handle.dispose()
                disposed.append(finished == [True])

            tg.start_soon(dispose)
            await wait_all_tasks_blocked()
            assert disposed == []
            release.set()
    assert disposed == [True]
    assert ticket.result == rec.DisposedOutcome()


# --- delivery verbs ----------------------------------------------------------------------------


async def test_steer_during_a_turn_forces_one_more_step() -> None:
    entered = anyio.Event()
    release = anyio.Event()
    model = FakeModel([gate(entered, release), say("first answer"), finish()])
    async with running_agent(model) as handle:
        agent = handle.agent
        ticket = agent.followup(text("question"))
        await entered.wait()
        agent.steer(text("steering"))
        release.set()
        assert await ticket.wait() == rec.Completed()
        assert len(model.requests) == 2
        assert request_user_texts(model.requests[1])[-1] == "steering"
        assert kinds(agent.session) == [
            "turn/start",
            "message/user",
            "step/start",
            "message/assistant",
            "step/end",
            "message/user",
            "step/start",
            "message/assistant",
            "step/end",
            "turn/end",
        ]
        steering = of_type(agent.session, rec.UserMessage)[1]
        assert steering.origin == "steering"
        assert steering.turn_id == turn_ends(agent.session)[0].turn_id


async def test_steer_when_idle_becomes_a_turn() -> None:
    model = FakeModel()
    async with running_agent(model) as handle:
        agent = handle.agent
        agent.steer(text("steered while idle"))
        await agent.when_idle()
        assert user_texts(agent.session, "prompt") == ["steered while idle"]
        assert [end.outcome for end in turn_ends(agent.session)] == [rec.Completed()]
        assert len(model.requests) == 1


async def test_inject_when_idle_appends_context_without_a_turn() -> None:
    model = FakeModel()
    async with running_agent(model) as handle:
        agent = handle.agent
        agent.inject(text("background"))
        await agent.when_idle()
        (message,) = agent.session.records
        assert isinstance(message, rec.UserMessage)
        assert message.origin == "context"
        assert message.turn_id is None
        assert model.requests == []
        assert agent.status == "idle"


async def test_inject_during_a_turn_lands_in_that_turn_without_another_step() -> None:
    entered = anyio.Event()
    release = anyio.Event()
    model = FakeModel([gate(entered, release), say("answer"), finish()])
    async with running_agent(model) as handle:
        agent = handle.agent
        ticket = agent.followup(text("question"))
        await entered.wait()
        agent.inject(text("injected"))
        release.set()
        assert await ticket.wait() == rec.Completed()
        (end,) = turn_ends(agent.session)
        injected = [r for r in of_type(agent.session, rec.UserMessage) if r.origin == "context"]
        assert [r.turn_id for r in injected] == [end.turn_id]
        assert len(model.requests) == 1  # inject never runs the model by itself
        assert kinds(agent.session).index("message/user", 2) < kinds(agent.session).index(
            "turn/end"
        )


async def test_inject_before_a_tool_step_reaches_the_next_request() -> None:
    entered = anyio.Event()
    release = anyio.Event()
    model = FakeModel([gate(entered, release), call("probe"), finish("tool_calls")])
    async with running_agent(model, tools=[FakeTool("probe")]) as handle:
        agent = handle.agent
        ticket = agent.followup(text("question"))
        await entered.wait()
        agent.inject(text("injected"))
        release.set()
        assert await ticket.wait() == rec.Completed()
        assert len(model.requests) == 2
        assert "injected" in request_user_texts(model.requests[1])
        # context lands after the tool result: results stay adjacent to their calls
        order = kinds(agent.session)
        assert order.index("tool/result") == order.index("message/assistant") + 1


# --- outcomes ----------------------------------------------------------------------------------


async def test_step_limit_ends_the_turn_with_max_turn_requests() -> None:
    model = FakeModel(default=TOOL_STEP)
    async with running_agent(model, tools=[FakeTool("probe")], max_steps=2) as handle:
        agent = handle.agent
        assert await agent.followup(text("loop")).wait() == rec.MaxTurnRequests()
        assert kinds(agent.session).count("step/start") == 2
        assert len(model.requests) == 2


@pytest.mark.parametrize(
    ("reason", "outcome"),
    [("max_tokens", rec.MaxTokens()), ("refusal", rec.Refusal())],
)
async def test_model_finish_reason_maps_to_the_turn_outcome(
    reason: Any, outcome: rec.Outcome
) -> None:
    async with running_agent(FakeModel([say("partial"), finish(reason)])) as handle:
        agent = handle.agent
        assert await agent.followup(text("q")).wait() == outcome
        (end,) = turn_ends(agent.session)
        assert end.outcome == outcome
        (step_end,) = of_type(agent.session, rec.StepEnd)
        assert step_end.finish == reason


async def test_model_error_ends_the_turn_with_an_error_outcome() -> None:
    async def fail(request: ModelRequest, signal: TurnSignal) -> object:
        raise ModelError("provider is down", code="503")

    model = FakeModel([say("partial"), fail])
    async with running_agent(model) as handle:
        agent = handle.agent
        ticket = agent.followup(text("q"))
        assert await ticket.wait() == rec.ErrorOutcome(message=MODEL_FAILED, code="503")
        assert ticket.error_detail == "provider is down"  # for the client, never durable
        assert await agent.followup(text("again")).wait() == rec.Completed()


async def test_a_tool_raising_a_plain_exception_fails_that_result_and_the_turn_goes_on() -> None:
    async def broken(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        raise RuntimeError("disk on fire")

    model = FakeModel(TOOL_STEP, [say("recovered"), finish()])
    async with running_agent(model, tools=[FakeTool("probe", broken)]) as handle:
        agent = handle.agent
        assert await agent.followup(text("q")).wait() == rec.Completed()
        (result,) = of_type(agent.session, rec.ToolResult)
        assert result.status == "failed"
        assert "disk on fire" in result.output
        assert result.synthetic is None
        assert len(model.requests) == 2


async def test_abort_midway_through_several_tool_calls_balances_the_unstarted_ones() -> None:
    entered = anyio.Event()
    waiting = FakeTool("wait", waiting_tool(entered))
    later = FakeTool("later")
    model = FakeModel(
        [call("wait"), call("later"), call("later"), finish("tool_calls")],
    )
    async with running_agent(model, tools=[waiting, later]) as handle:
        agent = handle.agent
        ticket = agent.followup(text("q"))
        await entered.wait()
        agent.cancel()
        assert await ticket.wait() == rec.Aborted()
        (end,) = turn_ends(agent.session)
        assert agent.session.open_tool_calls(end.turn_id) == []
        results = of_type(agent.session, rec.ToolResult)
        assert [r.synthetic for r in results] == [None, "not_run", "not_run"]
        assert all(r.status == "failed" for r in results)
        assert later.runs == []
        (message,) = of_type(agent.session, rec.AssistantMessage)
        assert [r.call_id for r in results] == [c.call_id for c in message.tool_calls]
        assert kinds(agent.session)[-1] == "turn/end"


# --- the durable shape of a turn --------------------------------------------------------------


async def test_turn_records_come_in_order() -> None:
    model = FakeModel(TOOL_STEP, [say("done"), finish()])
    async with running_agent(model, tools=[FakeTool("probe")]) as handle:
        agent = handle.agent
        assert await agent.followup(text("q")).wait() == rec.Completed()
        assert kinds(agent.session) == [
            "turn/start",
            "message/user",
            "step/start",
            "message/assistant",
            "tool/result",
            "step/end",
            "step/start",
            "message/assistant",
            "step/end",
            "turn/end",
        ]
        turn_id = turn_ends(agent.session)[0].turn_id
        assert all(getattr(r, "turn_id", None) == turn_id for r in agent.session.records)


@pytest.mark.parametrize("cause", [UserCancel(), ParentCancel()])
async def test_aborted_turn_end_is_exactly_kind_aborted_and_no_record_names_a_cause(
    cause: CancelCause,
) -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        ticket = agent.followup(text("q"))
        await entered.wait()
        agent.cancel(cause)
        assert await ticket.wait() == rec.Aborted()
        encoded = [rec.encode_record(r) for r in agent.session.records]
    end = json.loads(encoded[-1])
    assert end["type"] == "turn/end"
    assert end["outcome"] == {"kind": "aborted"}
    assert set(end) == {"type", "turn_id", "outcome", "at"}
    for line in encoded:
        assert b'"user"' not in line
        assert b'"parent"' not in line
        assert b"UserCancel" not in line
        assert b"ParentCancel" not in line


@pytest.mark.parametrize("seam", ["turn_stop", "continuation"])
async def test_a_turn_stop_or_continuation_listener_may_object_by_steering(seam: str) -> None:
    objected: list[bool] = []
    agent_box: list[Any] = []

    async def object_once(progress: TurnProgress, signal: TurnSignal) -> None:
        if not objected:
            objected.append(True)
            agent_box[0].steer(text("not done yet"))

    model = FakeModel()
    async with running_agent(model, seams=Seams(**{seam: [object_once]})) as handle:
        agent = handle.agent
        agent_box.append(agent)
        assert await agent.followup(text("q")).wait() == rec.Completed()
        assert len(model.requests) == 2
        assert user_texts(agent.session, "steering") == ["not done yet"]
        assert request_user_texts(model.requests[1])[-1] == "not done yet"


# --- further edges -----------------------------------------------------------------------------


async def test_steering_is_never_requeued_as_a_turn_after_a_keep_inbox_cancel() -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        first = agent.followup(text("running"))
        await entered.wait()
        agent.steer(text("steering"))
        queued = agent.followup(text("queued"))
        agent.cancel(keep_inbox=True)
        assert await first.wait() == rec.Aborted()
        assert await queued.wait() == rec.Completed()
        await agent.when_idle()
        assert "steering" not in user_texts(agent.session)
        assert len(turn_ends(agent.session)) == 2


async def test_withdraw_drops_only_a_queued_followup() -> None:
    model, entered, release = gated_model()
    async with running_agent(model) as handle:
        agent = handle.agent
        first = agent.followup(text("first"))
        second = agent.followup(text("second"))
        third = agent.followup(text("third"))
        await entered.wait()
        assert second.withdraw() is True
        assert second.result == Dropped()
        assert second.withdraw() is False
        release.set()
        assert await first.wait() == rec.Completed()
        assert await third.wait() == rec.Completed()
        assert user_texts(agent.session) == ["first", "third"]


async def test_a_running_followup_cannot_be_withdrawn_only_cancelled_keeping_the_queue() -> None:
    entered = anyio.Event()
    model, tools = _parked(entered)
    async with running_agent(model, tools=tools) as handle:
        agent = handle.agent
        causes: list[CancelCause] = []
        agent.on_cancel_requested(causes.append)
        first = agent.followup(text("first"))
        second = agent.followup(text("second"))
        await entered.wait()
        assert first.withdraw() is False  # its turn began: only cancel() stops it
        agent.cancel(keep_inbox=True)
        assert await first.wait() == rec.Aborted()
        assert await second.wait() == rec.Completed()
        assert causes == [UserCancel()]


async def test_tearing_down_the_task_group_mid_turn_records_a_disposed_turn_end() -> None:
    model, entered, _ = gated_model()  # never released: the task group is torn down
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            handle = make_handle(tg, model)
            agent = handle.agent
            ticket = agent.followup(text("q"))
            await entered.wait()
            tg.cancel_scope.cancel()
    assert ticket.result == rec.DisposedOutcome()
    assert [end.outcome for end in turn_ends(agent.session)] == [rec.DisposedOutcome()]


async def test_a_failing_durability_flush_neither_strands_the_ticket_nor_stops_the_agent() -> None:
    flushes: list[int] = []

    async def flush() -> None:
        flushes.append(1)
        if len(flushes) == 1:
            raise OSError("disk full")

    async with running_agent(FakeModel(), flush=flush) as handle:
        agent = handle.agent
        assert await agent.followup(text("one")).wait() == rec.Completed()
        assert await agent.followup(text("two")).wait() == rec.Completed()
        assert len(flushes) == 2
