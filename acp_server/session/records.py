"""Durable session records: what happened to a session, one msgspec Struct per line of its log.

A session log is a flat, append-only sequence of records, each tagged by ``type``:

- ``turn/start``: a claimed follow-up opens a turn;
- ``message/user``: a user message, being the turn's prompt, added context, steering, or an
  idle ``inject`` (then ``turn_id`` is absent);
- ``step/start``: one model request begins;
- ``message/assistant``: the model's answer, text and thought parts plus requested tool calls;
- ``tool/result``: the result of one requested tool call;
- ``step/end``: the step is over, with the model's finish reason;
- ``turn/end``: the turn is over, with its ``Outcome`` (tagged by ``kind``);
- ``context/compaction``: the conversation before a message was compacted (a summary, or old
  tool results cut to a stub); the model sees the compacted form from then on;
- ``session/rewind``: the conversation was cut back to before a turn and the files the file
  tools changed since were restored (`acp_server.session.rewind` reads the log through it);
- ``background/start``, ``background/end``: a background item (a command that outlives the
  turn that started it) started, and ended: by itself, stopped, or with the agent process that
  ran it (crash repair writes that end, its outcome unknown).

Durable records hold no stack, signal, exception object, cancel cause or free-form cancel
text: they state what happened to the turn, never who asked for it or how the runtime noticed.
An aborted turn therefore ends with exactly::

    {"type":"turn/end","turn_id":"...","outcome":{"kind":"aborted"},"at":"..."}

whether a user or a parent agent cancelled it. Outcomes and ``turn/end`` forbid unknown
fields, so decoding rejects a legacy ``{"kind":"aborted","reason":"user"}`` or a ``"reason"``
beside the outcome instead of dropping it; other records ignore them (the journal RFC says why).
See docs/rfc/implemented/architecture/2026-11-30-explicit-turn-cancellation.md.

Wire names are the snake_case attribute names and are part of the on-disk format: keep them
stable. Optional fields are left out when they hold their default. Timestamps (``at``) are
ISO 8601 UTC strings with millisecond precision, as produced by `utc_now()`.

Over 500 lines: one union: the on-disk format is one tagged union, kept in one place field by
field.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

import msgspec

__all__ = [
    "RECORD_DECODER",
    "RECORD_ENCODER",
    "Aborted",
    "AssistantMessage",
    "AssistantPart",
    "BackgroundEnd",
    "BackgroundStart",
    "Compaction",
    "Completed",
    "DisposedOutcome",
    "ErrorOutcome",
    "FileCheckpoint",
    "ImagePart",
    "InterruptedOutcome",
    "MaxTokens",
    "MaxTurnRequests",
    "Origin",
    "Outcome",
    "Part",
    "Record",
    "Refusal",
    "ResourceLinkPart",
    "ResourcePart",
    "Rewind",
    "RewindKept",
    "StepEnd",
    "StepStart",
    "Synthetic",
    "SystemPromptChange",
    "TextPart",
    "ThoughtPart",
    "ToolCallRecord",
    "ToolResult",
    "TurnEndRecord",
    "TurnStart",
    "UserMessage",
    "decode_record",
    "encode_record",
    "set_clock",
    "utc_now",
]


# --- the configuration every durable struct shares -------------------------------------------


class _Durable(msgspec.Struct, frozen=True, omit_defaults=True):
    """Frozen, defaults left out of the JSON. Each struct still states `frozen=True,
    kw_only=True`: msgspec applies `kw_only` only to the fields a class defines, and mypy reads
    a subclass that passes any option but not `frozen=True` as mutable."""


class _TaggedByType(_Durable, frozen=True, tag_field="type"):
    """A content part or a log record, told apart by ``type``."""


class _TaggedByKind(_Durable, frozen=True, forbid_unknown_fields=True, tag_field="kind"):
    """A turn outcome, told apart by ``kind``; strict (see the module docstring)."""


# --- content parts (tagged by "type") -------------------------------------------------------


class TextPart(_TaggedByType, tag="text", frozen=True, kw_only=True):
    """Plain text, from the user or the model."""

    text: str


class ImagePart(_TaggedByType, tag="image", frozen=True, kw_only=True):
    """An image given inline."""

    data: str
    """Base64-encoded image bytes."""
    mime_type: str
    uri: str | None = None


class ResourcePart(_TaggedByType, tag="resource", frozen=True, kw_only=True):
    """An embedded resource: its contents travel with the message (text or base64 blob)."""

    uri: str
    text: str | None = None
    blob: str | None = None
    mime_type: str | None = None


class ResourceLinkPart(_TaggedByType, tag="resource_link", frozen=True, kw_only=True):
    """A reference to a resource the agent may read; its contents are not included."""

    uri: str
    name: str
    mime_type: str | None = None
    title: str | None = None
    description: str | None = None
    size: int | None = None


Part: TypeAlias = TextPart | ImagePart | ResourcePart | ResourceLinkPart
"""Content of a user message."""


class ThoughtPart(_TaggedByType, tag="thought", frozen=True, kw_only=True):
    """The model's reasoning text."""

    text: str


AssistantPart: TypeAlias = TextPart | ThoughtPart
"""Content of an assistant message."""


class DiffRecord(_Durable, frozen=True, kw_only=True):
    """A file change made by a tool call; `old_text` None means a new file."""

    path: str
    old_text: str | None = None
    new_text: str


class LocationRecord(_Durable, frozen=True, kw_only=True):
    """A file (and 1-based line) a tool call touched."""

    path: str
    line: int | None = None


class PlanEntryRecord(_Durable, frozen=True, kw_only=True):
    """One entry of the agent's plan."""

    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed"]


class FileCheckpoint(_Durable, frozen=True, kw_only=True):
    """What a file tool's write replaced: kept before the write, content-addressed in the data
    dir (`acp_server/tools/checkpoints.py`), so a rewind can put it back."""

    path: str
    """The resolved, symlink-free path written."""
    before: str | None = None
    """SHA-256 (hex) of the bytes the file held; None: there was no file (or see `skipped`)."""
    after: str
    """SHA-256 (hex) of what the tool wrote: a rewind restores only a file that still holds it."""
    skipped: str | None = None
    """Why the previous content was not kept (over the cap, not a regular file, unreadable);
    a rewind then leaves the file as it is and says so."""


class ToolCallRecord(_Durable, frozen=True, kw_only=True):
    """One tool call the model asked for (part of an `AssistantMessage`, not a record itself)."""

    call_id: str
    """Ours: unique within the session. Results, replay, rewind and the client know the call by
    it. (A journal written before the agent made its own ids holds the model's; loading makes
    them unique, see acp_server/session/call_ids.py.)"""
    model_call_id: str | None = None
    """The id the model server gave the call, sent back only to pair the call with its result
    inside a model request; None: the model knows the call by `call_id` (one it wrote as text,
    or one journaled before the agent made its own ids)."""
    name: str
    arguments: dict[str, Any]
    from_text: bool = False
    """The model wrote this call as text (a JSON object, a fenced block or `<tool_call>` tags)
    and the agent recognised it (see acp_server/agent/text_calls.py)."""
    edit_block: bool = False
    """The model wrote this change as an edit block in its answer (a whole-file listing or a
    search/replace block, acp_server/agent/edit_blocks.py) and the agent applied it through
    this call: the model reads its answer back as the text it was, and the result as a note
    in the next user message."""


# --- turn outcomes (tagged by "kind"; unknown fields are an error) ----------------------------


class Completed(_TaggedByKind, tag="completed", frozen=True, kw_only=True):
    """The model finished and no further step was owed."""


class Aborted(_TaggedByKind, tag="aborted", frozen=True, kw_only=True):
    """The turn was cancelled (by the user or a parent agent; deliberately not recorded which).

    Has no fields and must never gain one: it encodes as exactly ``{"kind":"aborted"}``.
    """


class ErrorOutcome(_TaggedByKind, tag="error", frozen=True, kw_only=True):
    """The turn failed: a message and an optional code, both ours (never provider text)."""

    message: str
    code: str | None = None


class DisposedOutcome(_TaggedByKind, tag="disposed", frozen=True, kw_only=True):
    """The agent's owner disposed it while the turn ran (wins over an earlier cancel)."""


class MaxTokens(_TaggedByKind, tag="max_tokens", frozen=True, kw_only=True):
    """The model stopped at its output token limit."""


class MaxTurnRequests(_TaggedByKind, tag="max_turn_requests", frozen=True, kw_only=True):
    """The turn hit the step limit."""


class Refusal(_TaggedByKind, tag="refusal", frozen=True, kw_only=True):
    """The model refused to continue."""


class InterruptedOutcome(_TaggedByKind, tag="interrupted", frozen=True, kw_only=True):
    """The process died while the turn was open; written by crash repair when loading."""


Outcome: TypeAlias = (
    Completed
    | Aborted
    | ErrorOutcome
    | DisposedOutcome
    | MaxTokens
    | MaxTurnRequests
    | Refusal
    | InterruptedOutcome
)
"""How a turn ended."""


# --- records (tagged by "type") -------------------------------------------------------------

Origin: TypeAlias = Literal["prompt", "context", "steering"]
"""Why a user message is in the log: a turn's prompt, context added to it or injected, or
steering staged while the turn ran."""

Synthetic: TypeAlias = Literal["not_run", "outcome_unknown"]
"""How the runtime made up a tool result it did not get from running the tool."""


class TurnStart(_TaggedByType, tag="turn/start", frozen=True, kw_only=True):
    """A claimed follow-up opened a turn."""

    turn_id: str
    at: str


class UserMessage(_TaggedByType, tag="message/user", frozen=True, kw_only=True):
    """A user message: the prompt of a turn, context added to it, steering, or an idle inject."""

    message_id: str
    content: list[Part]
    origin: Origin
    turn_id: str | None = None
    """The turn it belongs to; absent for an `inject` while the agent was idle."""
    at: str


class StepStart(_TaggedByType, tag="step/start", frozen=True, kw_only=True):
    """One model request of a turn begins (steps count from the turn's start)."""

    turn_id: str
    step: int
    at: str


class AssistantMessage(_TaggedByType, tag="message/assistant", frozen=True, kw_only=True):
    """The model's answer in one step, with the tool calls it asked for."""

    turn_id: str
    message_id: str
    parts: list[AssistantPart]
    tool_calls: list[ToolCallRecord] = []
    origin: Literal["model", "agent"] = "model"
    """`agent`: a notice of the agent's own (a stopped turn), shown to the client but never
    sent to the model as its words."""
    at: str


class ToolResult(_TaggedByType, tag="tool/result", frozen=True, kw_only=True):
    """The result of one requested tool call. Refused or rejected calls are `failed` results."""

    turn_id: str
    call_id: str
    status: Literal["completed", "failed"]
    output: str
    synthetic: Synthetic | None = None
    """Set when the runtime made the result up rather than running the tool: ``not_run`` for a
    call that never started because the turn was aborted, ``outcome_unknown`` for a call crash
    repair found without a result. Keeps every call in the log paired with a result."""
    title: str | None = None
    """The tool call's human-readable title as shown to the client, so replay can show it."""
    kind: str | None = None
    """The tool call's kind as shown to the client (e.g. ``read``, ``edit``, ``execute``)."""
    diffs: list[DiffRecord] = []
    """File changes the call made, shown as diffs (replayed as such)."""
    locations: list[LocationRecord] = []
    """Files the call touched."""
    checkpoints: list[FileCheckpoint] = []
    """What the call's writes replaced (write_file, edit_file), for a rewind."""
    images: list[ImagePart] = []
    """Images the tool returned (`read_file` of an image file), stored here once: the output
    only describes them. The model is sent them when it takes images; replay shows them."""
    at: str


class StepEnd(_TaggedByType, tag="step/end", frozen=True, kw_only=True):
    """The step is over; `finish` is the model's finish reason."""

    turn_id: str
    step: int
    finish: str
    at: str


class TurnEndRecord(
    _TaggedByType, tag="turn/end", frozen=True, kw_only=True, forbid_unknown_fields=True
):
    """The turn is over: what happened, never who asked. Strict, unlike the other records."""

    turn_id: str
    outcome: Outcome
    at: str


class PlanRecord(_TaggedByType, tag="plan", frozen=True, kw_only=True):
    """The agent replaced its plan (the complete list, as ACP sends it)."""

    turn_id: str
    entries: list[PlanEntryRecord]
    at: str


class ModeChange(_TaggedByType, tag="session/mode", frozen=True, kw_only=True):
    """The session's permission mode changed; the last one is restored on load."""

    mode: str
    at: str


class ModelChange(_TaggedByType, tag="session/model", frozen=True, kw_only=True):
    """The session switched model (a model spec such as `openai:gpt-4o`); restored on load."""

    model: str
    at: str


class PermissionRule(_TaggedByType, tag="session/permission", frozen=True, kw_only=True):
    """The user chose "always" for a tool call; restored on load in the same workspace.

    A rejection covers the kind; an allow covers `scope` only (see
    `acp_server.tools.permission_rules`). A rule without a scope (written before scopes
    existed) allows only the kind's edits, the one scope named by the kind alone."""

    tool_kind: str
    decision: Literal["allow", "reject"]
    scope: str | None = None
    workspace: list[str] | None = None
    """The workspace it was given in (resolved cwd, then additional directories); a session
    in another workspace does not apply it. None: written before rules named one."""
    at: str


class SystemPromptChange(_TaggedByType, tag="session/system_prompt", frozen=True, kw_only=True):
    """The client gave the session a system prompt (`append`ed to our instructions, or
    `override` replacing them), already cut to its budget (the cut noted in `text`). The last
    one holds from then on; it is restored on load and carried into forks."""

    mode: Literal["append", "override"]
    text: str
    at: str


class Compaction(_TaggedByType, tag="context/compaction", frozen=True, kw_only=True):
    """The conversation before message `kept_from` was compacted; from here on the model sees
    the compacted form. With a `summary`, that summary replaces every message before
    `kept_from`; without one, only the bodies of the tool results before it were dropped (each
    keeps a one-line stub). Messages from `kept_from` on stay verbatim. Nothing is deleted from
    the log: replay still shows the whole history, with the compaction at its place in it."""

    compaction_id: str
    kept_from: str
    """The message id of the first user or assistant message kept verbatim."""
    summary: str | None = None
    turn_id: str | None = None
    """The turn it ran in; None for one asked for by `/compact` (which opens no turn)."""
    tokens_before: int
    """Estimated tokens of the conversation before, and after, this compaction."""
    tokens_after: int
    at: str


class RewindKept(_Durable, frozen=True, kw_only=True):
    """A file a rewind left as it was, and why (edited since, no checkpoint, now a link...)."""

    path: str
    reason: str
    kept_at: str | None = None
    """Where its content before the rewound turns is kept (a blob in the data dir), if it is."""


class Rewind(_TaggedByType, tag="session/rewind", frozen=True, kw_only=True):
    """The conversation was cut back to before turn `turn_id`: that turn and every record after
    it (except session settings) leave the model's context and `session/load`'s replay. Files
    the file tools changed in those turns were restored (`restored`) or left (`kept`)."""

    rewind_id: str
    turn_id: str
    restored: list[str] = []
    kept: list[RewindKept] = []
    commands: list[str] = []
    """`bash` commands that ran in the rewound turns: what they changed is not restored."""
    tasks: list[str] = []
    """Descriptions of the subagents (`task` calls) of the rewound turns: what they changed is
    not restored either."""
    at: str


class BackgroundStart(_TaggedByType, tag="background/start", frozen=True, kw_only=True):
    """A background item started: a command that belongs to the session, not to the turn that
    started it (docs/rfc/implemented/architecture/2026-12-06-background-work.md)."""

    item: str
    """The item's name in its session (`bg_1`, ...): counted by the session, not an id of
    `acp_server.ids`."""
    call_id: str | None = None
    """The tool call that started it (in the log of the agent that made it: a subagent's item
    names a call of the child's log)."""
    command: str
    at: str


class BackgroundEnd(_TaggedByType, tag="background/end", frozen=True, kw_only=True):
    """A background item ended: `exited` by itself, `stopped` by the agent (a stop asked for,
    or the session's end), or `unknown`: it ended with the agent process that ran it, which
    wrote no end (crash repair writes this one). The exit status is the command's, when known."""

    item: str
    """The item's name in its session (`bg_1`, ...): counted by the session, not an id of
    `acp_server.ids`."""
    how: Literal["exited", "stopped", "unknown"]
    exit_code: int | None = None
    posix_signal: int | None = None
    at: str


Record: TypeAlias = (
    TurnStart
    | UserMessage
    | StepStart
    | AssistantMessage
    | ToolResult
    | StepEnd
    | TurnEndRecord
    | PlanRecord
    | ModeChange
    | ModelChange
    | PermissionRule
    | SystemPromptChange
    | Compaction
    | Rewind
    | BackgroundStart
    | BackgroundEnd
)
"""One entry of a session log."""


RECORD_ENCODER = msgspec.json.Encoder()
"""Shared JSON encoder for records (msgspec encoders are reusable and cheap to call)."""

RECORD_DECODER: msgspec.json.Decoder[Record] = msgspec.json.Decoder(Record)
"""Shared JSON decoder for one record; strict about outcome fields (see the module docstring)."""


def encode_record(record: Record) -> bytes:
    """One record as compact JSON (no trailing newline)."""
    return RECORD_ENCODER.encode(record)


def decode_record(data: bytes | bytearray | memoryview | str) -> Record:
    """Parse one record. msgspec's `DecodeError`/`ValidationError` propagate unchanged."""
    return RECORD_DECODER.decode(data)


Clock: TypeAlias = Callable[[], int]
"""Milliseconds since the Unix epoch."""

_clock: Clock | None = None


def set_clock(clock: Clock | None) -> None:
    """Make `utc_now` read `clock` instead of real time (None restores real time).

    Process-wide on purpose: deterministic mode (acp_server/determinism.py) installs its clock
    once at start-up, as configuration, before any record is written.
    """
    global _clock
    _clock = clock


def utc_now() -> str:
    """The current time as an ISO 8601 UTC timestamp with milliseconds, e.g.
    ``2026-11-30T04:05:06.123Z`` (no datetime import: this runs on the prompt path)."""
    millis = time.time_ns() // 1_000_000 if _clock is None else _clock()
    seconds, ms = divmod(millis, 1000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{ms:03d}Z"
