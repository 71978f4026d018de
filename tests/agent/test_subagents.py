"""The `task` tool in-process: a child agent with its own journaled session, the parent's signal
reaching it as `ParentCancel` (or disposal), fork seeding, the depth and concurrency limits,
and separate identities of concurrent children.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_server.agent.agent import Agent, spawn_agent
from acp_server.agent.events import ToolCallAnnounced, ToolCallProgress
from acp_server.agent.loop import AgentConfig
from acp_server.agent.subagents import (
    NO_ASKING,
    ChildJournal,
    SubagentLimits,
    TaskArgs,
    TaskTool,
    journal_children,
)
from acp_server.cancellation import (
    CancelCause,
    ParentCancel,
    TurnAborted,
    TurnCancellation,
    TurnSignal,
    UserCancel,
)
from acp_server.session import records as rec
from acp_server.session.journal import JournalStore
from acp_server.session.log import SessionLog
from acp_server.tools.arguments import StructTool
from acp_server.tools.base import ToolOutput
from acp_server.tools.permissions import PermissionPolicy
from acp_server.tools.workspace import PathRoots
from tests.support.agent_harness import (
    DEADLINE,
    FakeModel,
    FakeTool,
    call,
    finish,
    request_user_texts,
    say,
    text,
    wait_for_abort,
    waiting_tool,
)
from tests.support.parent_agent import ParentModel, box, ids, parent_agent
from tests.support.tool_call import a_call

pytestmark = pytest.mark.anyio


class MemoryJournals:
    """An in-memory `ChildJournalFactory` that remembers what it made."""

    def __init__(self) -> None:
        self.made: list[tuple[str, str, str]] = []
        self.logs: dict[str, SessionLog] = {}
        self.closed: list[str] = []
        self.flushes = 0

    def __call__(self, session_id: str, parent_id: str, call_id: str) -> ChildJournal:
        self.made.append((session_id, parent_id, call_id))
        log = SessionLog(session_id)
        self.logs[session_id] = log

        async def flush() -> None:
            self.flushes += 1

        return ChildJournal(log, flush, lambda: self.closed.append(session_id))


def task(prompt: str = "go", **more: Any) -> Any:
    return call("task", prompt=prompt, **more)


def results(log: SessionLog) -> list[rec.ToolResult]:
    return [r for r in log.records if isinstance(r, rec.ToolResult)]


# --- a completed child -------------------------------------------------------------------------


async def test_the_parent_tool_result_is_the_child_final_message(tmp_path: Path) -> None:
    probe = FakeTool("probe")
    child = FakeModel([call("probe"), finish("tool_calls")], [say("child "), say("answer")])
    model = ParentModel([task("find it", description="look")], [say("parent done")], child=child)
    store = JournalStore(tmp_path)
    journals = journal_children(store, str(tmp_path), [])
    async with parent_agent(model, journals, tools=[probe]) as (handle, events):
        outcome = await handle.agent.followup(text("hi")).wait()
    assert outcome == rec.Completed()
    [result] = results(handle.agent.session)
    assert result.status == "completed"
    assert result.output == "child answer"
    assert result.title == "task: look"
    assert result.kind == "think"
    # The child's own tool call is not announced as the parent's; its activity is progress.
    announced = [e for e in events if isinstance(e, ToolCallAnnounced)]
    assert [e.name for e in announced] == ["task"]
    progress = [
        e.output
        for e in events
        if isinstance(e, ToolCallProgress) and e.status == "in_progress" and e.output
    ]
    assert progress and progress[0].startswith("running probe")
    # The child's session is journaled, linked to the parent session and tool call.
    path = tmp_path / "sessions" / "s1.task1.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["parent_session_id"] == "s1"
    assert lines[0]["parent_tool_call_id"] == result.call_id
    assert lines[-1]["type"] == "turn/end" and lines[-1]["outcome"] == {"kind": "completed"}
    assert child.requests[0].session_id == "s1.task1"
    # Nothing of the child is left: the journal is closed (it can be opened again here).
    store.open("s1.task1").journal.close()


async def test_a_child_ending_without_text_gives_no_message_not_the_agents_notice() -> None:
    """The loop says "The model ended its turn without an answer" to a client; a parent model
    reading the subagent's result gets the subagent's own words, here none."""
    probe = FakeTool("probe")
    child = FakeModel([call("probe"), finish("tool_calls")], [finish("stop")])
    model = ParentModel([task()], [say("ok")], child=child)
    journals = MemoryJournals()
    async with parent_agent(model, journals, tools=[probe]) as (handle, _):
        assert await handle.agent.followup(text("hi")).wait() == rec.Completed()
    [result] = results(handle.agent.session)
    assert result.status == "completed"
    assert result.output == "(the subagent finished without a message)"
    [log] = journals.logs.values()
    said = [r for r in log.records if isinstance(r, rec.AssistantMessage) and r.origin == "agent"]
    assert [p.text for r in said for p in r.parts if isinstance(p, rec.TextPart)] == [
        "The model ended its turn without an answer. Send a new prompt to continue."
    ]


async def test_a_child_that_fails_gives_a_clear_failed_result() -> None:
    child = FakeModel([say("partial"), finish("max_tokens")])
    model = ParentModel([task()], [say("ok")], child=child)
    journals = MemoryJournals()
    async with parent_agent(model, journals) as (handle, _):
        await handle.agent.followup(text("hi")).wait()
    [result] = results(handle.agent.session)
    assert result.status == "failed"
    assert "max_tokens" in result.output and "partial" in result.output
    assert journals.closed == ["s1.task1"]


# --- cancellation reaches the child ------------------------------------------------------------


async def test_cancelling_the_parent_cancels_the_child_with_parent_cause() -> None:
    entered = anyio.Event()
    slow = FakeTool("slow", waiting_tool(entered))
    child = FakeModel([call("slow"), finish("tool_calls")])
    model = ParentModel([task()], child=child)
    journals = MemoryJournals()
    children: list[Agent] = []
    causes: list[CancelCause] = []

    def hear(agent: Agent) -> None:
        children.append(agent)
        agent.on_cancel_requested(causes.append)

    tool_log = SessionLog("s1")
    tool = TaskTool(
        parent_log=tool_log,
        model=model,
        toolbox=box([slow]),
        journals=journals,
        ids=ids(),
        on_child=hear,
    )
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = spawn_agent(tool_log, AgentConfig(model=model, tools=[slow, tool]), tg)
            ticket = handle.agent.followup(text("hi"))
            await entered.wait()
            handle.agent.cancel(UserCancel())
            outcome = await ticket.wait()
            await handle.agent.when_idle()
            await handle.dispose()
    assert outcome == rec.Aborted()
    assert causes == [ParentCancel()]
    [agent] = children
    assert agent.status == "disposed"
    child_log = journals.logs["s1.task1"]
    end = child_log.last_turn_end()
    assert end is not None and end.outcome == rec.Aborted()
    assert journals.closed == ["s1.task1"]
    [result] = results(tool_log)
    assert result.status == "failed" and result.call_id == journals.made[0][2]
    assert result.output == "cancelled: the turn was aborted"


async def test_disposing_the_parent_disposes_the_child() -> None:
    entered = anyio.Event()
    slow = FakeTool("slow", waiting_tool(entered))
    child = FakeModel([call("slow"), finish("tool_calls")])
    model = ParentModel([task()], child=child)
    journals = MemoryJournals()
    children: list[Agent] = []
    async with parent_agent(model, journals, tools=[slow], children=children) as (handle, _):
        ticket = handle.agent.followup(text("hi"))
        await entered.wait()
        await handle.dispose()
        outcome = await ticket.wait()
    assert outcome == rec.DisposedOutcome()
    end = journals.logs["s1.task1"].last_turn_end()
    assert end is not None and end.outcome == rec.DisposedOutcome()
    assert children[0].status == "disposed"
    assert journals.closed == ["s1.task1"]


async def test_an_already_aborted_signal_creates_no_child() -> None:
    journals = MemoryJournals()
    model = ParentModel(child=FakeModel())
    tool = TaskTool(parent_log=SessionLog("s1"), model=model, toolbox=box([]), journals=journals)
    holder = TurnCancellation()
    holder.abort(UserCancel())
    with pytest.raises(TurnAborted):
        await tool.run({"prompt": "go"}, a_call("call_x"), holder.signal)
    assert journals.made == []
    assert model.child.requests == []


# --- fork ----------------------------------------------------------------------------------------


async def test_fork_seeds_the_child_with_the_parent_completed_turns() -> None:
    child = FakeModel([say("forked")], [say("spawned")])
    model = ParentModel(
        [say("first answer")],
        [task("fork job", fork=True)],
        [say("ok")],
        [task("spawn job")],
        [say("ok")],
        child=child,
    )
    journals = MemoryJournals()
    async with parent_agent(model, journals) as (handle, _):
        await handle.agent.followup(text("first question")).wait()
        await handle.agent.followup(text("second")).wait()
        await handle.agent.followup(text("third")).wait()
    forked, spawned = child.requests
    assert request_user_texts(forked) == ["first question", "fork job"]
    assert [type(m).__name__ for m in forked.messages] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
    ]
    # The open turn (the one calling task) is not part of the seed; spawn starts empty.
    assert request_user_texts(spawned) == ["spawn job"]
    assert results(handle.agent.session)[0].output == "forked"
    # The seed is in the child's own log (and so in its journal).
    seeded = journals.logs["s1.task1"]
    assert isinstance(seeded.records[0], rec.TurnStart)


# --- limits --------------------------------------------------------------------------------------


async def test_the_depth_limit_takes_task_away_from_the_deepest_child() -> None:
    def tool_names(depth: int) -> list[str]:
        return [t.name for t in child.requests[-1].tools]

    seen: dict[int, list[str]] = {}
    for depth in (0, 1, 2):
        child = FakeModel([say("done")])
        tool = TaskTool(
            parent_log=SessionLog("s1"),
            model=ParentModel(child=child),
            toolbox=box([FakeTool("probe")]),
            journals=MemoryJournals(),
            depth=depth,
            limits=SubagentLimits(max_depth=3),
        )
        with anyio.fail_after(DEADLINE):
            out = await tool.run({"prompt": "go"}, a_call("c"), TurnCancellation().signal)
        assert out.text == "done"
        seen[depth + 1] = tool_names(depth)
    assert seen == {1: ["probe", "task"], 2: ["probe", "task"], 3: ["probe"]}
    assert SubagentLimits().max_depth == 2  # by default a child's child gets no task tool


async def test_a_child_gets_the_tools_the_session_has_when_the_call_runs() -> None:
    """An MCP tool that connected after the session's `task` tool was made is a child's too
    (the tool's description promises the same tools); the parent's `task` never is."""
    child = FakeModel([call("mcp__srv__late"), finish("tool_calls")], [say("used it")])
    toolbox = box([FakeTool("probe")])
    tool = TaskTool(
        parent_log=SessionLog("s1"),
        model=ParentModel(child=child),
        toolbox=toolbox,
        journals=MemoryJournals(),
        limits=SubagentLimits(max_depth=1),
    )
    toolbox.add([tool])
    late = FakeTool("mcp__srv__late")
    toolbox.add([late])
    with anyio.fail_after(DEADLINE):
        out = await tool.run({"prompt": "go"}, a_call("c"), TurnCancellation().signal)
    assert out.text == "used it"
    assert [t.name for t in child.requests[0].tools] == ["probe", "mcp__srv__late"]
    assert len(late.runs) == 1


async def test_nested_children_get_nested_session_ids() -> None:
    sub = FakeModel([task("deeper")], [say("inner")], [say("outer")])
    journals = MemoryJournals()
    tool = TaskTool(
        parent_log=SessionLog("s1"),
        model=ParentModel(child=sub),
        toolbox=box([]),
        journals=journals,
    )
    # The subagent's provider is its own subagent variant (as with the scripted model).
    sub.for_subagent = lambda: sub  # type: ignore[attr-defined]
    with anyio.fail_after(DEADLINE):
        out = await tool.run({"prompt": "go"}, a_call("c"), TurnCancellation().signal)
    assert out.text == "outer"
    assert [m[0] for m in journals.made] == ["s1.task1", "s1.task1.task1"]
    assert journals.made[1][1] == "s1.task1"


async def test_concurrent_children_keep_separate_identities_and_signals() -> None:
    entered = [anyio.Event(), anyio.Event()]
    release = anyio.Event()
    seen: list[str] = []

    async def behaviour(arguments: Mapping[str, Any], signal: TurnSignal) -> ToolOutput:
        index = int(arguments["n"])
        seen.append(f"child{index}")
        entered[index].set()
        with signal.linked_scope():
            await release.wait()
        signal.raise_if_aborted()
        return ToolOutput("ok")

    probe = FakeTool("probe", behaviour)
    child = FakeModel(
        [call("probe", n=0), finish("tool_calls")],
        [call("probe", n=1), finish("tool_calls")],
        default=[say("finished")],
    )
    journals = MemoryJournals()
    children: list[Agent] = []
    tool = TaskTool(
        parent_log=SessionLog("s1"),
        model=ParentModel(child=child),
        toolbox=box([probe]),
        journals=journals,
        on_child=children.append,
    )
    first, second = TurnCancellation(), TurnCancellation()
    outcomes: dict[str, object] = {}
    first_done = anyio.Event()

    async def run(name: str, holder: TurnCancellation) -> None:
        try:
            outcomes[name] = await tool.run({"prompt": name}, a_call(name), holder.signal)
        except TurnAborted:
            outcomes[name] = "aborted"
        if name == "a":
            first_done.set()

    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a", first)
            await entered[0].wait()
            tg.start_soon(run, "b", second)
            await entered[1].wait()
            assert tool.running == 2
            first.abort(UserCancel())  # only the first child is cancelled
            await first_done.wait()
            assert "b" not in outcomes and children[1].status == "running"
            release.set()
    assert outcomes["a"] == "aborted"
    assert isinstance(outcomes["b"], ToolOutput) and outcomes["b"].text == "finished"
    assert [m[0] for m in journals.made] == ["s1.task1", "s1.task2"]
    assert [m[2] for m in journals.made] == ["a", "b"]
    assert seen == ["child0", "child1"]
    ends = [journals.logs[f"s1.task{n}"].last_turn_end() for n in (1, 2)]
    assert [e.outcome if e else None for e in ends] == [rec.Aborted(), rec.Completed()]


async def test_the_concurrency_limit_refuses_extra_task_calls() -> None:
    entered = anyio.Event()
    probe = FakeTool("probe", waiting_tool(entered))
    child = FakeModel([call("probe"), finish("tool_calls")])
    tool = TaskTool(
        parent_log=SessionLog("s1"),
        model=ParentModel(child=child),
        toolbox=box([probe]),
        journals=MemoryJournals(),
        limits=SubagentLimits(max_concurrent=1),
    )
    holder = TurnCancellation()
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:

            async def first() -> None:
                with pytest.raises(TurnAborted):
                    await tool.run({"prompt": "one"}, a_call("a"), holder.signal)

            tg.start_soon(first)
            await entered.wait()
            out = await tool.run({"prompt": "two"}, a_call("b"), TurnCancellation().signal)
            holder.abort(UserCancel())
    assert out.failed and "at most 1" in out.text
    assert tool.running == 0


# --- permissions -------------------------------------------------------------


async def test_children_cannot_ask_for_permission(tmp_path: Path) -> None:
    command = FakeTool("run", kind="execute")
    child = FakeModel([call("run"), finish("tool_calls")], [say("gave up")])
    model = ParentModel([task()], [say("ok")], child=child)
    journals = MemoryJournals()

    class NeverAsked:
        async def ask(self, *args: Any) -> Any:
            raise AssertionError("a child's call reached the client")

    path_roots = PathRoots(str(tmp_path))
    policy = PermissionPolicy(path_roots, {"run": command}, NeverAsked(), mode="default")
    async with parent_agent(model, journals, tools=[command], policy=policy) as (handle, _):
        await handle.agent.followup(text("hi")).wait()
        assert command.runs == []
        denied = results(journals.logs["s1.task1"])
        assert denied[0].status == "failed" and NO_ASKING in denied[0].output
        # The parent's mode applies live: in bypass the child may run it.
        policy.mode = "bypass"
        child_two = FakeModel([call("run"), finish("tool_calls")], [say("ran")])
        model.child = child_two
        model._responses = [[task()], [say("ok")]]
        await handle.agent.followup(text("again")).wait()
    assert len(command.runs) == 1
    assert results(handle.agent.session)[-1].output == "ran"


async def test_a_child_past_its_time_limit_is_cancelled_and_the_call_fails() -> None:
    entered = anyio.Event()
    child = FakeModel([say("working on it"), wait_for_abort(entered)])
    model = ParentModel(child=child)
    tool = TaskTool(
        parent_log=SessionLog("s1"),
        model=model,
        toolbox=box([]),
        journals=MemoryJournals(),
        limits=SubagentLimits(max_seconds=0.2),
    )
    output = await tool.run({"prompt": "go"}, a_call("call_t"), TurnCancellation().signal)
    assert entered.is_set()
    assert output.failed
    assert output.text.startswith("the subagent was stopped after 0.2 s")
    assert "working on it" in output.text


def test_the_task_tool_states_the_schema_of_its_struct() -> None:
    # Like every tool a session's Toolbox makes (tests/tools/test_arguments.py), which `task`
    # is not: its schema is generated from its argument Struct, never written beside it.
    assert issubclass(TaskTool, StructTool)
    assert "parameters" not in vars(TaskTool)
    assert TaskTool.args_type is TaskArgs
