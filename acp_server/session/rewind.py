"""Reading a session log through its rewinds: which records still count, its turns, and what a
rewind to before one of them has to restore.

A `session/rewind` record cuts the log back to before a turn: that turn's `turn/start` and
every record after it leave the conversation (the model's context, `session/load`'s replay,
forks), except session settings (mode, model, "always" answers, the client's system prompt),
which hold from when they were given, and earlier rewinds, which replay still shows. Nothing
is deleted from the journal. See
docs/rfc/implemented/feature/2026-12-02-checkpoints-and-rewind.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import records as rec
from .state import SETTINGS

__all__ = [
    "Changes",
    "FileChange",
    "ThroughRewinds",
    "Turn",
    "changes_since",
    "fingerprint",
    "retained",
    "through_rewinds",
    "turns",
]


@dataclass(frozen=True)
class ThroughRewinds:
    """A log read through its rewinds (`through_rewinds`)."""

    records: list[rec.Record]
    """The records that still count, in log order (the rewinds themselves included, at their
    place): see `retained`."""
    numbers: dict[str, int]
    """For each rewind (by `rewind_id`), the number its turn had when it was made, as
    `/rewind N` counted it (and its notice said): a later rewind may have cut the turns before
    it, so the retained records alone cannot tell."""


def through_rewinds(records: Iterable[rec.Record]) -> ThroughRewinds:
    """`records` read through every rewind they hold, in one pass."""
    kept: list[rec.Record] = []
    numbers: dict[str, int] = {}
    starts: dict[str, int] = {}
    """Index in `kept` of each retained turn's `turn/start`."""
    for record in records:
        if isinstance(record, rec.Rewind):
            start = starts.get(record.turn_id)
            if start is not None:
                numbers[record.rewind_id] = 1 + sum(1 for i in starts.values() if i < start)
                kept[start:] = [r for r in kept[start:] if isinstance(r, (*SETTINGS, rec.Rewind))]
                starts = {turn: i for turn, i in starts.items() if i < start}
        elif isinstance(record, rec.TurnStart):
            starts[record.turn_id] = len(kept)
        kept.append(record)
    return ThroughRewinds(kept, numbers)


def retained(records: Iterable[rec.Record]) -> list[rec.Record]:
    """The records that still count once every rewind in `records` is applied, in log order
    (the rewinds themselves included, at their place)."""
    return through_rewinds(records).records


def text_of(message: rec.UserMessage) -> str:
    """The whole text of a user message (its text parts, joined)."""
    return "".join(p.text for p in message.content if isinstance(p, rec.TextPart))


def fingerprint(text: str) -> str:
    """`sha256:` and the hex SHA-256 of `text` (UTF-8): how `_session/rewind` names a message
    whose id the client does not know."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Turn:
    """A turn still in the conversation, numbered from 1 as `/rewind N` counts them."""

    number: int
    turn_id: str
    prompt: rec.UserMessage | None
    """Its prompt (None for a turn opened without one, e.g. by steering)."""
    last_reply: rec.AssistantMessage | None
    """The last assistant message before this turn began (the retained boundary)."""


def turns(records: Sequence[rec.Record]) -> list[Turn]:
    """The turns of retained `records` (see `retained`), oldest first."""
    found: list[Turn] = []
    open_turn: str | None = None
    prompt: rec.UserMessage | None = None
    last_reply: rec.AssistantMessage | None = None
    reply_before: rec.AssistantMessage | None = None

    def close() -> None:
        if open_turn is not None:
            found.append(Turn(len(found) + 1, open_turn, prompt, reply_before))

    for record in records:
        if isinstance(record, rec.TurnStart):
            close()
            open_turn, prompt, reply_before = record.turn_id, None, last_reply
        elif isinstance(record, rec.UserMessage):
            if record.turn_id == open_turn and record.origin == "prompt" and prompt is None:
                prompt = record
        elif isinstance(record, rec.AssistantMessage):
            last_reply = record
    close()
    return found


@dataclass
class FileChange:
    """A file the file tools changed in the rewound turns: its content before the first of
    those changes, and the content the last one left."""

    path: str
    before: str | None
    """SHA-256 of the content before; None: there was no file."""
    after: str
    skipped: str | None
    """Why the content before was not kept (the file cannot be restored)."""
    calls: list[str] = field(default_factory=list)


@dataclass
class Changes:
    """What the rewound turns changed, as far as the log knows."""

    files: list[FileChange]
    """By path, in the order first changed."""
    commands: list[str]
    """The `bash` commands asked for (what they changed is unknown)."""
    tasks: list[str]
    """The subagents started (`task` calls, by description or prompt): their file changes are
    in their own journals."""


FILE_TOOLS = ("write_file", "edit_file")
"""The tools whose results carry checkpoints."""

NO_CHECKPOINT = "this write was journaled without a checkpoint"
"""Why a file tool's completed write without a checkpoint (a journal written before
checkpoints were kept) cannot be restored."""


def changes_since(records: Sequence[rec.Record], turn_id: str) -> Changes:
    """What the file tools changed from turn `turn_id` on (in retained `records`), and the
    `bash` commands and subagents that ran meanwhile. A completed file tool call whose result
    holds no checkpoint is a change that cannot be restored, named by the path it was given."""
    changes: dict[str, FileChange] = {}
    file_calls: dict[tuple[str, str], str] = {}
    """The path each file tool call was given, by turn and call id."""
    commands: list[str] = []
    tasks: list[str] = []
    started = False
    for record in records:
        if isinstance(record, rec.TurnStart) and record.turn_id == turn_id:
            started = True
        if not started:
            continue
        if isinstance(record, rec.AssistantMessage):
            for call in record.tool_calls:
                command = call.arguments.get("command")
                if call.name == "bash" and isinstance(command, str):
                    commands.append(command)
                task = call.arguments.get("description") or call.arguments.get("prompt")
                if call.name == "task" and isinstance(task, str):
                    tasks.append(task)
                path = call.arguments.get("path")
                if call.name in FILE_TOOLS and isinstance(path, str):
                    file_calls[record.turn_id, call.call_id] = path
        elif isinstance(record, rec.ToolResult):
            path = file_calls.get((record.turn_id, record.call_id))
            if not record.checkpoints and record.status == "completed" and path is not None:
                if path not in changes:
                    changes[path] = FileChange(path, None, "", NO_CHECKPOINT)
                changes[path].calls.append(record.call_id)
            for cp in record.checkpoints:
                change = changes.get(cp.path)
                if change is None:
                    change = changes[cp.path] = FileChange(cp.path, cp.before, cp.after, cp.skipped)
                change.after = cp.after
                change.calls.append(record.call_id)
    return Changes(list(changes.values()), commands, tasks)
