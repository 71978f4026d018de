"""A parent agent with the task tool, for the subagent tests: a model double with a subagent
variant, the toolbox and ids it is built with, and the agent itself with its events."""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from acp_server.agent.agent import Agent, AgentHandle, spawn_agent
from acp_server.agent.events import AgentEvent
from acp_server.agent.loop import AgentConfig
from acp_server.agent.seams import Seams
from acp_server.agent.subagents import TaskTool
from acp_server.models.base import ModelProvider
from acp_server.session.log import SessionLog
from acp_server.tools.base import Tool
from acp_server.tools.permissions import PermissionPolicy
from acp_server.tools.toolbox import Toolbox
from acp_server.tools.workspace import PathRoots
from tests.support.agent_harness import DEADLINE, FakeModel, Response


class ParentModel(FakeModel):
    """A model double whose subagent variant is another double (like the scripted model)."""

    def __init__(self, *responses: Response, child: FakeModel) -> None:
        super().__init__(*responses)
        self.child = child

    def for_subagent(self) -> ModelProvider:
        return self.child


def box(tools: Sequence[Tool], path_roots: PathRoots | None = None) -> Toolbox:
    """A toolbox holding `tools` (in the test's working directory, unless `path_roots`)."""
    return Toolbox(path_roots or PathRoots(os.getcwd()), tools)


def ids() -> Any:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter)}"


@asynccontextmanager
async def parent_agent(
    model: FakeModel,
    journals: Any,
    *,
    tools: Sequence[Tool] = (),
    policy: PermissionPolicy | None = None,
    children: list[Agent] | None = None,
) -> AsyncIterator[tuple[AgentHandle, list[AgentEvent]]]:
    """A parent agent `s1` with the given tools plus `task`; yields its handle and events."""
    log = SessionLog("s1")
    made = ids()
    tool = TaskTool(
        parent_log=log,
        model=model,
        toolbox=box(tools, policy.path_roots if policy is not None else None),
        journals=journals,
        policy=policy,
        ids=made,
        on_child=children.append if children is not None else None,
    )
    events: list[AgentEvent] = []

    async def sink(event: AgentEvent) -> None:
        events.append(event)

    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tg:
            handle = spawn_agent(
                log,
                AgentConfig(model=model, tools=[*tools, tool]),
                tg,
                seams=Seams(approval=[policy.approve] if policy is not None else []),
                ids=made,
            )
            handle.agent.subscribe(sink)
            try:
                yield handle, events
            finally:
                await handle.dispose()
