"""Tool-call ids unique within a session, also for journals written before the agent made its own.

Since the agent gives every call an id of its own (`acp_server/agent/model_step.py`), a
journal's `call_id`s are unique within its session and the model server's ids are kept beside
them (`ToolCallRecord.model_call_id`). A journal written before that holds the model's ids
only, and model servers reuse them: a local server's `call_1` in two turns, or twice in one
response. Keyed by such an id, `session/load` showed the first call under the second one's
title and sent one `toolCallId` twice, which ACP forbids.

`unique_call_ids` makes a loaded log's ids unique, the same way at every load: the first call
of an id keeps it, a later one gets `<id>~<n>` (the smallest n >= 2 that no call or result of
the journal uses: the agent's own ids never hold a `~`) and keeps the model's id in
`model_call_id`, so the model is sent exactly what it was sent before. A result belongs to the
earliest call of its turn with its id that has no result yet (as crash repair pairs them,
acp_server/session/repair.py) and takes that call's id. A log whose ids are unique comes back
unchanged. Nothing is written back: the journal stays as it was written. `written_call_id`
gives back the id a call was written with, which subagent journals of that time name their
parent's call by (acp_server/acp/child_sessions.py pairs them).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import msgspec

from . import records as rec

__all__ = ["unique_call_ids", "written_call_id"]


def unique_call_ids(records: Sequence[rec.Record]) -> list[rec.Record]:
    """`records` with every tool call's id unique within the session (see the module
    docstring); the same objects where nothing had to change."""
    ids = _Ids(records)
    unanswered: dict[tuple[str, str], deque[str]] = {}
    """(turn, id as written) -> the unique ids of that turn's calls without a result yet."""
    out: list[rec.Record] = []
    for record in records:
        if isinstance(record, rec.AssistantMessage) and record.tool_calls:
            calls = [ids.unique(call) for call in record.tool_calls]
            for written, call in zip(record.tool_calls, calls, strict=True):
                key = (record.turn_id, written.call_id)
                unanswered.setdefault(key, deque()).append(call.call_id)
            if calls != record.tool_calls:
                record = msgspec.structs.replace(record, tool_calls=calls)
        elif isinstance(record, rec.ToolResult):
            waiting = unanswered.get((record.turn_id, record.call_id))
            if waiting:
                call_id = waiting.popleft()
                if call_id != record.call_id:
                    record = msgspec.structs.replace(record, call_id=call_id)
        out.append(record)
    return out


def written_call_id(call: rec.ToolCallRecord) -> str:
    """The id `call` has in its journal: its `call_id`, unless `unique_call_ids` renamed it
    `<id>~<n>` on load, keeping the written id in `model_call_id`. (A subagent's journal names
    its parent's call by the written id.)"""
    written = call.model_call_id
    if written is not None:
        number = call.call_id.removeprefix(f"{written}~")
        if number != call.call_id and number.isdigit():
            return written
    return call.call_id


class _Ids:
    """The call ids of one log: those written, those given out so far, and the next number to
    try for each reused id (so a hostile log reusing one id N times costs N, not N squared)."""

    def __init__(self, records: Sequence[rec.Record]) -> None:
        self._written: set[str] = set()
        for record in records:
            if isinstance(record, rec.AssistantMessage):
                self._written.update(call.call_id for call in record.tool_calls)
            elif isinstance(record, rec.ToolResult):
                self._written.add(record.call_id)
        self._given: set[str] = set()
        self._next: dict[str, int] = {}

    def unique(self, call: rec.ToolCallRecord) -> rec.ToolCallRecord:
        """`call`, or a copy under a fresh id when an earlier call of the log had its id."""
        if call.call_id not in self._given:
            self._given.add(call.call_id)
            return call
        number = self._next.get(call.call_id, 2)
        while f"{call.call_id}~{number}" in self._written:
            number += 1
        self._next[call.call_id] = number + 1
        fresh = f"{call.call_id}~{number}"
        self._given.add(fresh)
        model_call_id = call.model_call_id or call.call_id
        return msgspec.structs.replace(call, call_id=fresh, model_call_id=model_call_id)
