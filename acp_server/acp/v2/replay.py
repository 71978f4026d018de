"""A session's journal as v2 updates, for `session/resume` with `replayFrom: {"type": "start"}`.

The same walk over the records as v1's replay (acp/replay.py), in v2's shapes, so a replay
shows what the client saw live, under the ids it saw: each prompt as one `user_message` with its
journaled id; the assistant's thoughts and text as chunks of their message, in the order they
were streamed (whole-message upserts would lose how thoughts and text interleave); each tool
call created with its title, kind and input, then its result; plans as `plan_update`s of the
one plan; compactions and rewinds at their place. Config changes (mode, model) are state, not
history: the resume's answer and later updates carry the current values. Context and steering
the agent added itself were never shown, so they are not replayed; notices are live-only.

A call the turn's abort stopped while it ran was shown `cancelled`; the journal holds it as a
failed result (the records do not change with the wire), and the replay reads the status back
from how the loop writes it (acp_server/session/stopped_calls.py). Display terminals are not
replayed; the call's result text carries the command's output, and for a background command
that has ended, how it ended (as v1's replay).
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import UNSET

from acp_protocol import session_update as su1
from acp_protocol.content import ImageContent, TextContent
from acp_protocol.plan_operations import PlanItems, PlanUpdate
from acp_protocol.tool_call import ContentToolCallContent, ToolCallLocation
from acp_protocol.v2 import session_update as su
from acp_protocol.v2.tool_call import ToolCallContent, ToolCallUpdate
from acp_server.session import records as rec
from acp_server.session.rewind import through_rewinds
from acp_server.session.stopped_calls import stopped_calls

from ..plans import PLAN_ID
from ..replay import background_endings, block_for, shown_call
from ..rewind_text import rewind_text
from ..updates import AGENT_ORIGIN, compaction_summary
from .diffs import diff_content

__all__ = ["replay_v2"]


def _result_content(result: rec.ToolResult, ending: str) -> list[ToolCallContent]:
    content: list[ToolCallContent] = [
        diff_content(d.path, d.old_text, d.new_text) for d in result.diffs
    ]
    text = TextContent(text=result.output + ending)
    content.append(ContentToolCallContent(content=text))
    content.extend(
        ContentToolCallContent(content=ImageContent(data=i.data, mime_type=i.mime_type))
        for i in result.images
    )
    return content


def replay_v2(records: Sequence[rec.Record], cwd: str) -> list[su.SessionUpdate]:
    """Every update that shows the conversation in `records` (a session's whole log, read
    through its rewinds here), in conversation order."""
    log = through_rewinds(records)
    records = log.records
    results = {(r.turn_id, r.call_id): r for r in records if isinstance(r, rec.ToolResult)}
    endings = background_endings(records)
    stopped = stopped_calls(records)
    updates: list[su.SessionUpdate] = []
    plan_shown = False
    for record in records:
        if isinstance(record, rec.UserMessage):
            if record.origin == "prompt":
                content = [block_for(part) for part in record.content]
                updates.append(su.UserMessage(message_id=record.message_id, content=content))
        elif isinstance(record, rec.AssistantMessage):
            for part in record.parts:
                text = TextContent(text=part.text)
                if isinstance(part, rec.ThoughtPart):
                    updates.append(su.AgentThoughtChunk(message_id=record.message_id, content=text))
                else:
                    meta = AGENT_ORIGIN if record.origin == "agent" else UNSET
                    updates.append(
                        su.AgentMessageChunk(message_id=record.message_id, content=text, meta=meta)
                    )
            for call in record.tool_calls:
                title, kind = shown_call(call, results.get((record.turn_id, call.call_id)))
                updates.append(
                    ToolCallUpdate(
                        tool_call_id=call.call_id,
                        title=title,
                        name=call.name,
                        kind=kind,
                        status="pending",
                        raw_input=dict(call.arguments),
                    )
                )
        elif isinstance(record, rec.ToolResult):
            updates.append(
                ToolCallUpdate(
                    tool_call_id=record.call_id,
                    status="cancelled"
                    if (record.turn_id, record.call_id) in stopped
                    else record.status,
                    content=_result_content(record, endings.get(record.call_id, "")),
                    locations=[
                        ToolCallLocation(path=loc.path)
                        if loc.line is None
                        else ToolCallLocation(path=loc.path, line=loc.line)
                        for loc in record.locations
                    ]
                    or UNSET,
                )
            )
        elif isinstance(record, rec.PlanRecord):
            if record.entries or plan_shown:
                plan_shown = bool(record.entries)
                entries = [
                    su1.PlanEntry(content=e.content, priority=e.priority, status=e.status)
                    for e in record.entries
                ]
                updates.append(PlanUpdate(plan=PlanItems(plan_id=PLAN_ID, entries=entries)))
        elif isinstance(record, rec.Rewind):
            updates.append(
                su.AgentMessageChunk(
                    message_id=record.rewind_id,
                    content=TextContent(
                        text=rewind_text(record, log.numbers.get(record.rewind_id), cwd)
                    ),
                    meta=AGENT_ORIGIN,
                )
            )
        elif isinstance(record, rec.Compaction):
            summary = TextContent(text=compaction_summary(record.summary))
            updates.append(
                su1.CompactionUpdate(
                    compaction_id=record.compaction_id, status="completed", summary=[summary]
                )
            )
    return updates
