"""A session log -> the `session/update`s that show it again (for `session/load`).

Replay shows what the client saw live: the user's prompts, assistant text and thoughts under
their original message ids, and every tool call with its title, kind, input, final status and
output. Context and steering the agent added itself were never shown, so they are not replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast, get_args

from msgspec import UNSET

from acp_protocol.content import (
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
)
from acp_protocol.newer import NewerSessionUpdate
from acp_protocol.session_update import (
    AgentMessageChunk,
    AgentThoughtChunk,
    CompactionUpdate,
    CurrentModeUpdate,
    UserMessageChunk,
)
from acp_protocol.tool_call import ToolCall, ToolCallLocation, ToolCallUpdate, ToolKind
from acp_server.printable import one_line
from acp_server.process.background import ItemEnd
from acp_server.session import records as rec
from acp_server.session.rewind import through_rewinds

from .plans import PlanView
from .rewind_text import rewind_text
from .updates import AGENT_ORIGIN, compaction_summary, tool_content

_TOOL_KINDS = frozenset(get_args(ToolKind))


def shown_call(call: rec.ToolCallRecord, result: rec.ToolResult | None) -> tuple[str, ToolKind]:
    """The one-line title and the kind a replayed call is announced with (v1 and v2): as its
    result recorded them when the client was shown it, else its name and `other`."""
    title = result.title if result is not None and result.title else call.name
    kind = result.kind if result is not None else None
    return one_line(title), cast(ToolKind, kind) if kind in _TOOL_KINDS else "other"


def block_for(part: rec.Part) -> ContentBlock:
    """A durable content part as an ACP content block."""
    if isinstance(part, rec.TextPart):
        return TextContent(text=part.text)
    if isinstance(part, rec.ImagePart):
        return ImageContent(data=part.data, mime_type=part.mime_type, uri=part.uri)
    if isinstance(part, rec.ResourcePart):
        if part.text is not None:
            contents = ResourceContents(uri=part.uri, text=part.text, mime_type=part.mime_type)
        else:
            contents = ResourceContents(
                uri=part.uri, blob=part.blob or "", mime_type=part.mime_type
            )
        return EmbeddedResource(resource=contents)
    return ResourceLink(
        uri=part.uri,
        name=part.name,
        mime_type=part.mime_type,
        title=part.title,
        description=part.description,
        size=part.size,
    )


def background_endings(records: Sequence[rec.Record]) -> dict[str, str]:
    """For each call that started a background command which has ended, a line saying how,
    to show after that call's output (the item outlived its turn; its end is not a turn's).
    A journal opened from disk has an end for every item (crash repair writes the unknown
    ones), so only an item running in this process goes without."""
    started = {
        r.item: r.call_id for r in records if isinstance(r, rec.BackgroundStart) and r.call_id
    }
    endings: dict[str, str] = {}
    for record in records:
        call_id = started.get(record.item) if isinstance(record, rec.BackgroundEnd) else None
        if isinstance(record, rec.BackgroundEnd) and call_id is not None:
            end = ItemEnd(record.how, record.exit_code, record.posix_signal)
            endings[call_id] = f"\n[{record.item} has ended: it {end.describe()}]"
    return endings


def replay_updates(
    records: Sequence[rec.Record],
    *,
    compaction: bool = False,
    plans: PlanView | None = None,
    cwd: str = "/",
) -> list[NewerSessionUpdate]:
    """Every update that shows the conversation in `records` (a session's whole log, read
    through its rewinds here), in conversation order. Compactions are shown at their place: as
    `compaction_update` when the client advertised `session.compaction` (`compaction`), else as
    a short thought. Plans go through `plans` (`plan`, or plan operations), which ends as the
    live view did. A rewind is its notice, under its id and in the words `/rewind` said."""
    plans = plans if plans is not None else PlanView(operations=False)
    log = through_rewinds(records)
    records = log.records
    # By turn and id: a call's ids are ours and unique in the session (journals older than
    # that are made so on load, acp_server/session/call_ids.py); the turn is a second guard.
    results = {(r.turn_id, r.call_id): r for r in records if isinstance(r, rec.ToolResult)}
    endings = background_endings(records)
    updates: list[NewerSessionUpdate] = []
    for record in records:
        if isinstance(record, rec.UserMessage):
            if record.origin == "prompt":
                updates.extend(
                    UserMessageChunk(content=block_for(part), message_id=record.message_id)
                    for part in record.content
                )
        elif isinstance(record, rec.AssistantMessage):
            for part in record.parts:
                text = TextContent(text=part.text)
                if isinstance(part, rec.ThoughtPart):
                    updates.append(AgentThoughtChunk(content=text, message_id=record.message_id))
                elif record.origin == "agent":
                    updates.append(
                        AgentMessageChunk(
                            content=text, message_id=record.message_id, meta=AGENT_ORIGIN
                        )
                    )
                else:
                    updates.append(AgentMessageChunk(content=text, message_id=record.message_id))
            for call in record.tool_calls:
                title, kind = shown_call(call, results.get((record.turn_id, call.call_id)))
                updates.append(
                    ToolCall(
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
                    status=record.status,
                    content=tool_content(
                        record.output + endings.get(record.call_id, ""),
                        [(d.path, d.old_text, d.new_text) for d in record.diffs],
                        None,
                        [(i.data, i.mime_type) for i in record.images],
                    ),
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
            plan = plans.update([(e.content, e.priority, e.status) for e in record.entries])
            if plan is not None:
                updates.append(plan)
        elif isinstance(record, rec.ModeChange):
            updates.append(CurrentModeUpdate(current_mode_id=record.mode))
        elif isinstance(record, rec.Rewind):
            updates.append(
                AgentMessageChunk(
                    content=TextContent(
                        text=rewind_text(record, log.numbers.get(record.rewind_id), cwd)
                    ),
                    message_id=record.rewind_id,
                    meta=AGENT_ORIGIN,
                )
            )
        elif isinstance(record, rec.Compaction):
            text = TextContent(text=compaction_summary(record.summary))
            if compaction:
                updates.append(
                    CompactionUpdate(
                        compaction_id=record.compaction_id, status="completed", summary=[text]
                    )
                )
            else:
                updates.append(
                    AgentThoughtChunk(
                        content=TextContent(
                            text=f"(Compacted the conversation to ~{record.tokens_after} tokens.)"
                        ),
                        message_id=record.compaction_id,
                    )
                )
    return updates
