"""The in-memory session log: the append-only list of one session's records.

The agent loop and the bridge add records through the log's `recorder` (which builds and
stamps them, see `acp_server.session.recorder`) as a session runs; listeners registered with
`SessionLog.on_append` (the journal writer, the ACP bridge's update stream, tests) see each
record right after it is appended. The log never interprets or repairs records on its own: it
only offers the queries the runtime needs (fork seeding, balancing tool calls, reading a
subagent's answer).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from .recorder import Recorder
from .records import (
    AssistantMessage,
    Record,
    TextPart,
    ToolCallRecord,
    ToolResult,
    TurnEndRecord,
    TurnStart,
)

__all__ = ["SessionLog"]

log = logging.getLogger(__name__)

_Listener = Callable[[Record], None]


class _RecordsView(Sequence[Record]):
    """A live, read-only view of the log's list (no copy; the log stays the only writer)."""

    __slots__ = ("_records",)

    def __init__(self, records: list[Record]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> Record: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Record]: ...

    def __getitem__(self, index: int | slice) -> Record | Sequence[Record]:
        if isinstance(index, slice):
            return tuple(self._records[index])
        return self._records[index]

    def __iter__(self) -> Iterator[Record]:
        return iter(self._records)

    def __repr__(self) -> str:
        return f"<records of a session log: {len(self._records)}>"


class SessionLog:
    """The append-only record list of one session, with append listeners."""

    __slots__ = ("_listeners", "_next_token", "_records", "_view", "recorder", "session_id")

    def __init__(self, session_id: str, records: list[Record] | None = None) -> None:
        self.session_id = session_id
        self._records: list[Record] = list(records) if records is not None else []
        self._view = _RecordsView(self._records)
        self._listeners: dict[int, _Listener] = {}
        self._next_token = 0
        self.recorder = Recorder(self.append)
        """Builds, stamps and appends this session's records."""

    def __repr__(self) -> str:
        return f"SessionLog({self.session_id!r}, {len(self._records)} records)"

    @property
    def records(self) -> Sequence[Record]:
        """Every record so far, oldest first (a live read-only view)."""
        return self._view

    def append(self, record: Record) -> None:
        """Append one record, then tell every listener in registration order.

        A listener that raises is logged and skipped: it can neither undo the append nor keep
        later listeners from seeing the record.
        """
        self._records.append(record)
        # Snapshot: a listener may subscribe or unsubscribe while we iterate.
        for listener in tuple(self._listeners.values()):
            try:
                listener(record)
            except Exception:
                log.exception(
                    "session %s: append listener %r failed on a %s record",
                    self.session_id,
                    listener,
                    type(record).__name__,
                )

    def on_append(self, callback: Callable[[Record], None]) -> Callable[[], None]:
        """Call `callback(record)` after every later append; returns its unsubscribe function.

        Each registration is separate (registering one callable twice calls it twice), and
        unsubscribing is idempotent.
        """
        token = self._next_token
        self._next_token += 1
        self._listeners[token] = callback

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    def completed_turns(self) -> list[Record]:
        """The records of every ended turn, in log order, for seeding a fork.

        A turn is ended once its `turn/end` is in the log; an open turn (normally the last one,
        still running) contributes nothing. Out-of-turn user messages (idle injects, whose
        `turn_id` is None) are kept where they stand: they are finished facts, not part of any
        unfinished turn.
        """
        ended = {record.turn_id for record in self._records if isinstance(record, TurnEndRecord)}
        return [
            record
            for record in self._records
            if _turn_of(record) in ended or _turn_of(record) is None
        ]

    def open_tool_calls(self, turn_id: str) -> list[ToolCallRecord]:
        """Tool calls asked for in that turn's assistant messages that have no result yet.

        In request order. Each result pairs with the earliest unanswered call of its call id,
        so providers that reuse call ids across steps still balance correctly.
        """
        pending: list[ToolCallRecord] = []
        for record in self._records[self._turn_start(turn_id) :]:
            if _turn_of(record) != turn_id:
                continue
            if isinstance(record, AssistantMessage):
                pending.extend(record.tool_calls)
            elif isinstance(record, ToolResult):
                for index, call in enumerate(pending):
                    if call.call_id == record.call_id:
                        del pending[index]
                        break
        return pending

    def _turn_start(self, turn_id: str) -> int:
        """Index of the turn's `turn/start` (0 if absent). Searched from the end: the turn is
        normally the last one, so closing a turn costs its own length, not the log's."""
        for index in range(len(self._records) - 1, -1, -1):
            record = self._records[index]
            if isinstance(record, TurnStart) and record.turn_id == turn_id:
                return index
        return 0

    def last_turn_end(self) -> TurnEndRecord | None:
        """The most recent `turn/end`, or None if no turn has ended."""
        for record in reversed(self._records):
            if isinstance(record, TurnEndRecord):
                return record
        return None

    def last_assistant_text(self) -> str:
        """The text parts (not thoughts) of the last assistant message, joined; "" if none."""
        for record in reversed(self._records):
            if isinstance(record, AssistantMessage):
                return "".join(part.text for part in record.parts if isinstance(part, TextPart))
        return ""


def _turn_of(record: Record) -> str | None:
    """The turn a record belongs to; None for session-level records and idle injects."""
    turn_id: str | None = getattr(record, "turn_id", None)
    return turn_id
