"""A subagent compacts its own context the same way the session does: in its own turn, with
its own model, into its own journal; the parent's conversation is left alone."""

from __future__ import annotations

import itertools
import os

import anyio
import pytest

from acp_server.agent.agent import spawn_agent
from acp_server.agent.loop import AgentConfig
from acp_server.agent.subagents import ChildJournal, TaskTool
from acp_server.models.base import ModelProvider
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.tools.toolbox import Toolbox
from acp_server.tools.workspace import PathRoots
from tests.support.agent_harness import DEADLINE, FakeModel, Response, call, say, text

pytestmark = pytest.mark.anyio


class ParentModel(FakeModel):
    def __init__(self, *responses: Response, child: FakeModel) -> None:
        super().__init__(*responses)
        self.child = child

    def for_subagent(self) -> ModelProvider:
        return self.child


async def test_a_forked_child_over_its_threshold_compacts_its_own_log() -> None:
    # The child's first request is its compaction's summary (no tools), then its answer.
    child = FakeModel([say("SUMMARY of the parent's work")], [say("forked answer")])
    model = ParentModel(
        [say("first answer")],
        [say("second answer")],
        [call("task", prompt="fork job", fork=True)],
        [say("ok")],
        child=child,
    )
    logs: dict[str, SessionLog] = {}

    def journals(session_id: str, parent_id: str, call_id: str) -> ChildJournal:
        logs[session_id] = SessionLog(session_id)

        async def flush() -> None:
            return None

        return ChildJournal(logs[session_id], flush, lambda: None)

    counter = itertools.count(1)
    parent_log = SessionLog("s1")
    tool = TaskTool(
        parent_log=parent_log,
        model=model,
        toolbox=Toolbox(PathRoots(os.getcwd())),
        journals=journals,
        ids=lambda prefix: f"{prefix}_{next(counter)}",
        context_threshold=0.01,  # the child compacts at once; the parent keeps the default
    )
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = spawn_agent(parent_log, AgentConfig(model=model, tools=[tool]), tg)
            for prompt in ("first question", "second question", "delegate"):
                await handle.agent.followup(text(prompt)).wait()
            await handle.dispose()
    summary_request, answer_request = child.requests
    assert summary_request.tools == []
    child_log = logs["s1.task1"]
    [compaction] = [r for r in child_log.records if isinstance(r, rec.Compaction)]
    assert compaction.summary == "SUMMARY of the parent's work"
    assert not any(isinstance(r, rec.Compaction) for r in parent_log.records)
    # The child's answer request starts from its summary, not from the seeded turns.
    first = answer_request.messages[0]
    assert "SUMMARY of the parent's work" in str(first)
    results = [r for r in parent_log.records if isinstance(r, rec.ToolResult)]
    assert results[0].output == "forked answer"
