"""One session on a v2 connection: runtime events as v2 updates, the foreground state, and the
v2 askers (the runtime half of acp/v2/presenter.py).

Runtime event -> what the client is sent:

- `TurnStarting`: `state_update` running (from idle);
- `UserMessageRecorded`: `user_message` with the journaled id and the prompt's content;
- `MessageChunk`, `ThoughtChunk`: `agent_message_chunk`, `agent_thought_chunk` with their id;
- `ToolCallDrafted`, `ToolCallAnnounced`: `tool_call_update` (the first of an id creates the
  call with its title, kind and name);
- `ToolCallProgress`: `tool_call_update` (a call the turn's abort stopped: `cancelled`); a
  command also its display terminal (acp/v2/terminals.py); file changes as v2 diffs;
- `PlanUpdated`: `plan_update` of the plan `todo` (emptied: `entries: []`);
- `CompactionStarted`, `CompactionEnded`: `compaction_update` (then the size, `usage_update`);
- `ModelWaiting`: `usage_update` with how long the request has been quiet;
- `TurnSettled`: the turn's `usage_update`, then `state_update` idle with its stop reason;
- the session's background commands (not events of a turn): acp/v2/background.py.

`TurnSettled` is the turn's last event (after its durability flush), and the next turn starts
after it, so nothing of a turn follows its idle. Every update goes through the presenter's
`send`, in event order, on the one ordered writer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from msgspec import UNSET

from acp_protocol import session_update as su1
from acp_protocol.content import ImageContent, TextContent
from acp_protocol.plan_operations import PlanItems, PlanUpdate
from acp_protocol.tool_call import ContentToolCallContent, TerminalToolCallContent
from acp_protocol.v2 import session_update as su
from acp_protocol.v2.tool_call import ToolCallContent, ToolCallUpdate
from acp_server.agent import (
    AgentEvent,
    CompactionEnded,
    CompactionStarted,
    MessageChunk,
    ModelWaiting,
    PlanUpdated,
    ThoughtChunk,
    ToolCallAnnounced,
    ToolCallDrafted,
    ToolCallProgress,
    TurnSettled,
    TurnStarting,
    UserMessageRecorded,
)
from acp_server.printable import one_line
from acp_server.process.background import BackgroundItems
from acp_server.session import records as rec

from ..client_requests import AcpFormAsker
from ..context import BridgeContext
from ..plans import PLAN_ID, view_after
from ..replay import block_for
from ..updates import AGENT_ORIGIN, compaction_summary, location_of
from .background import BackgroundTerminals
from .client_requests import V2FormAsker, V2PermissionAsker, command_of
from .diffs import diff_content
from .foreground import Foreground
from .settled import idle_of
from .terminals import DisplayTerminals

__all__ = ["V2SessionView"]

ANNOUNCED_INPUTS = 64
"""Inputs of announced calls kept (for permission subjects and terminals); a cancelled turn's
calls never end, so the oldest go first."""


class V2SessionView:
    """One session on a v2 connection (see acp/presenter.py's `SessionView`)."""

    children = None  # v2 shows `task` children as progress of their call, not as sessions

    def __init__(
        self,
        send: Callable[[su.SessionUpdate], Awaitable[None]],
        context: BridgeContext,
        session_id: str,
        cwd: str,
        records: Sequence[rec.Record],
    ) -> None:
        """`send` queues one update of the session (the presenter's, which knows the wire's
        rules for closed sessions)."""
        self.send = send
        self._data_dir = context.options.data_dir
        self.foreground = Foreground(self.send)
        self._inputs: dict[str, Mapping[str, Any]] = {}
        self._terminals = DisplayTerminals(cwd)
        self._plan_shown = view_after(records, operations=True).shown
        self.permissions = V2PermissionAsker(
            context.peer, session_id, cwd, self._inputs, self.foreground
        )
        self.forms = V2FormAsker(AcpFormAsker(context.peer, session_id), self.foreground)
        self.background = BackgroundTerminals(self.send, self.foreground, cwd, context.task_group)

    def show_background(self, items: BackgroundItems) -> None:
        """The session's background commands as display terminals (acp/v2/background.py)."""
        self.background.follow(items)

    async def _output(self, update: su.SessionUpdate) -> None:
        """Output of the foreground work: it is running again if it had waited on the user."""
        await self.foreground.progressed()
        await self.send(update)

    async def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TurnStarting):
            await self.foreground.begin()
        elif isinstance(event, TurnSettled):
            if event.last_usage is not None:
                used = event.last_usage.input_tokens + event.last_usage.output_tokens
                await self.send(su1.UsageUpdate(used=used, size=event.window))
            reason, error = idle_of(event, self._data_dir)
            await self.foreground.end(reason, error)
        elif isinstance(event, UserMessageRecorded):
            content = [block_for(part) for part in event.content]
            await self.send(su.UserMessage(message_id=event.message_id, content=content))
        elif isinstance(event, MessageChunk):
            await self._output(
                su.AgentMessageChunk(
                    message_id=event.message_id,
                    content=TextContent(text=event.text),
                    meta=AGENT_ORIGIN if event.from_agent else UNSET,
                )
            )
        elif isinstance(event, ThoughtChunk):
            await self._output(
                su.AgentThoughtChunk(
                    message_id=event.message_id, content=TextContent(text=event.text)
                )
            )
        elif isinstance(event, ModelWaiting):
            await self.send(
                su1.UsageUpdate(
                    used=event.used,
                    size=event.window,
                    meta={"acp-server": {"modelWaitingSeconds": event.seconds}},
                )
            )
        elif isinstance(event, (ToolCallDrafted, ToolCallAnnounced, ToolCallProgress)):
            await self._tool_call(event)
        elif isinstance(event, PlanUpdated):
            await self._plan(event)
        elif isinstance(event, (CompactionStarted, CompactionEnded)):
            await self._compaction(event)

    async def _tool_call(
        self, event: ToolCallDrafted | ToolCallAnnounced | ToolCallProgress
    ) -> None:
        call_id = event.call_id
        if isinstance(event, ToolCallDrafted):
            raw = event.raw_input
            raw_input = UNSET if raw is None else raw if isinstance(raw, str) else dict(raw)
            if event.first:
                await self._output(
                    ToolCallUpdate(
                        tool_call_id=call_id,
                        title=one_line(event.name),
                        name=event.name,
                        kind=event.kind,
                        status="pending",
                        raw_input=raw_input,
                    )
                )
            else:
                await self._output(ToolCallUpdate(tool_call_id=call_id, raw_input=raw_input))
            return
        if isinstance(event, ToolCallAnnounced):
            self._inputs[call_id] = event.arguments
            while len(self._inputs) > ANNOUNCED_INPUTS:
                del self._inputs[next(iter(self._inputs))]
            await self._output(
                ToolCallUpdate(
                    tool_call_id=call_id,
                    title=one_line(event.title),
                    name=event.name,
                    kind=event.kind,
                    status="pending",
                    raw_input=dict(event.arguments),
                    locations=[location_of(loc) for loc in event.locations] or UNSET,
                )
            )
            return
        await self._progress(event)

    async def _progress(self, event: ToolCallProgress) -> None:
        call_id = event.call_id
        command = command_of(self._inputs.get(call_id))
        terminals = self._terminals
        if event.status == "in_progress":
            if command is not None and not terminals.is_open(call_id):
                await self._output(terminals.opened(call_id, command))
                await self.send(
                    ToolCallUpdate(
                        tool_call_id=call_id,
                        status="in_progress",
                        content=[TerminalToolCallContent(terminal_id=call_id)],
                    )
                )
            if event.output is None:
                if command is None:
                    await self._output(ToolCallUpdate(tool_call_id=call_id, status="in_progress"))
            elif terminals.is_open(call_id):
                await self._output(terminals.output(call_id, event.output))
            else:  # a tool's own progress text (a subagent's)
                await self._output(
                    ToolCallUpdate(
                        tool_call_id=call_id,
                        status="in_progress",
                        content=[ContentToolCallContent(content=TextContent(text=event.output))],
                    )
                )
            return
        content: list[ToolCallContent] = [
            diff_content(d.path, d.old_text, d.new_text) for d in event.diffs
        ]
        if terminals.is_open(call_id):
            await self._output(terminals.exited(call_id, event.output or "", event.process_exit))
            content.append(TerminalToolCallContent(terminal_id=call_id))
        if event.output is not None:
            content.append(ContentToolCallContent(content=TextContent(text=event.output)))
        content.extend(
            ContentToolCallContent(content=ImageContent(data=i.data, mime_type=i.mime_type))
            for i in event.images
        )
        self._inputs.pop(call_id, None)
        await self._output(
            ToolCallUpdate(
                tool_call_id=call_id,
                status=event.status,
                content=content,
                locations=[location_of(loc) for loc in event.locations] or UNSET,
            )
        )

    async def _plan(self, event: PlanUpdated) -> None:
        if not event.entries and not self._plan_shown:
            return  # an empty plan never shown: nothing to clear
        self._plan_shown = bool(event.entries)
        entries = [
            su1.PlanEntry(content=e.content, priority=e.priority, status=e.status)
            for e in event.entries
        ]
        await self._output(PlanUpdate(plan=PlanItems(plan_id=PLAN_ID, entries=entries)))

    async def _compaction(self, event: CompactionStarted | CompactionEnded) -> None:
        if isinstance(event, CompactionStarted):
            await self._output(
                su1.CompactionUpdate(compaction_id=event.compaction_id, status="in_progress")
            )
            return
        await self._output(
            su1.CompactionUpdate(
                compaction_id=event.compaction_id,
                status=event.status,
                summary=[TextContent(text=compaction_summary(event.summary))]
                if event.status == "completed"
                else UNSET,
                error=event.error if event.error is not None else UNSET,
            )
        )
        if event.status == "completed" and event.tokens is not None and event.window is not None:
            await self.send(su1.UsageUpdate(used=event.tokens, size=event.window))

    async def consent_asked(self, call_id: str, title: str, commands: str, path: str) -> None:
        await self._output(
            ToolCallUpdate(
                tool_call_id=call_id,
                title=title,
                kind="execute",
                status="pending",
                content=[ContentToolCallContent(content=TextContent(text=commands))],
                raw_input={"path": path},
            )
        )

    async def consent_answered(self, call_id: str, allowed: bool) -> None:
        await self.send(
            ToolCallUpdate(tool_call_id=call_id, status="completed" if allowed else "failed")
        )
