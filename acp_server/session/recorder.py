"""The recorder: the one place that builds a session's records and stamps their time.

Every durable record (`acp_server.session.records.Record`) and every journal header is made
here, and nowhere else in `acp_server` (tests/test_layers.py reads that from the source). The
runtime and the bridge say what happened in their own words (a turn started, the model
answered, a tool returned, the user chose a mode) and the recorder turns it into the record,
stamps it with `utc_now()` (deterministic mode's clock when installed) and appends it to the
log. So "what is journaled, and when" has one answer: this module.

The recorder takes the runtime's own values structurally (`DiffLike`, `PlanItemLike`, ...):
the session package imports nothing of the runtime, the tools or the bridge. It reads what it
journals from them itself: a tool call's result is built from the call as the client was shown
it and the tool's whole output (`ShownCallLike`, `OutputLike`), so journaling one more thing a
tool returns is a field of the record and a line here, and no caller changes
(docs/architecture.md, "Add a journaled field").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar

from . import records as rec
from .journal_format import JournalHeader

__all__ = [
    "CallLike",
    "DiffLike",
    "ImageLike",
    "KeptLike",
    "LocationLike",
    "OutputLike",
    "PlanItemLike",
    "Recorder",
    "ShownCallLike",
    "new_header",
]


class DiffLike(Protocol):
    """A file change a tool made (`acp_server.tools.base.Diff` is one)."""

    @property
    def path(self) -> str: ...
    @property
    def old_text(self) -> str | None: ...
    @property
    def new_text(self) -> str: ...


class LocationLike(Protocol):
    """A file (and 1-based line) a tool touched (`acp_server.tools.base.Location` is one)."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int | None: ...


class ImageLike(Protocol):
    """An image a tool returned (`acp_server.tools.base.ImageData` is one)."""

    @property
    def data(self) -> str: ...
    @property
    def mime_type(self) -> str: ...


class KeptLike(Protocol):
    """A file a rewind left as it was (`acp_server.tools.checkpoints.Keep` is one)."""

    @property
    def path(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def kept_at(self) -> str | None: ...


class PlanItemLike(Protocol):
    """One entry of the agent's plan (`acp_server.tools.base.PlanItem` is one)."""

    @property
    def content(self) -> str: ...
    @property
    def priority(self) -> Literal["high", "medium", "low"]: ...
    @property
    def status(self) -> Literal["pending", "in_progress", "completed"]: ...


class OutputLike(Protocol):
    """What a tool call returned (`acp_server.tools.base.ToolOutput` is one)."""

    @property
    def text(self) -> str: ...
    @property
    def failed(self) -> bool: ...
    @property
    def diffs(self) -> Sequence[DiffLike]: ...
    @property
    def locations(self) -> Sequence[LocationLike]: ...
    @property
    def checkpoints(self) -> Sequence[rec.FileCheckpoint]: ...
    @property
    def images(self) -> Sequence[ImageLike]: ...


class ShownCallLike(Protocol):
    """A tool call as the client was shown it (`acp_server.agent.ToolCallAnnounced` is one)."""

    @property
    def turn_id(self) -> str: ...
    @property
    def call_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def locations(self) -> Sequence[LocationLike]: ...


class CallLike(Protocol):
    """A tool call the model asked for (`acp_server.models.base.ToolCallRequest` is one)."""

    @property
    def call_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> Mapping[str, Any]: ...


R = TypeVar("R", bound=rec.Record)


class Recorder:
    """Builds one session's records, stamps each with the clock, and hands it to `append`
    (the session log's, or a list's for crash repair). Every method returns the record."""

    __slots__ = ("_append", "_clock")

    def __init__(
        self, append: Callable[[rec.Record], None], clock: Callable[[], str] = rec.utc_now
    ) -> None:
        self._append = append
        self._clock = clock

    def _add(self, record: R) -> R:
        self._append(record)
        return record

    # --- a turn -------------------------------------------------------------------------------

    def turn_started(self, turn_id: str) -> rec.TurnStart:
        return self._add(rec.TurnStart(turn_id=turn_id, at=self._clock()))

    def user_message(
        self,
        message_id: str,
        content: list[rec.Part],
        origin: rec.Origin,
        turn_id: str | None = None,
    ) -> rec.UserMessage:
        """A prompt, context or steering of a turn; an idle inject has no `turn_id`."""
        return self._add(
            rec.UserMessage(
                message_id=message_id,
                content=content,
                origin=origin,
                turn_id=turn_id,
                at=self._clock(),
            )
        )

    def step_started(self, turn_id: str, step: int) -> rec.StepStart:
        return self._add(rec.StepStart(turn_id=turn_id, step=step, at=self._clock()))

    def assistant_message(
        self,
        turn_id: str,
        message_id: str,
        parts: list[rec.AssistantPart],
        calls: Sequence[CallLike] = (),
        *,
        from_text: frozenset[str] | set[str] = frozenset(),
        edit_blocks: frozenset[str] | set[str] = frozenset(),
        model_ids: Mapping[str, str] | None = None,
        origin: Literal["model", "agent"] = "model",
    ) -> rec.AssistantMessage:
        """The model's answer of one step: `calls` under our ids, `model_ids` the model
        server's id of each (by ours; a call without one is known to the model by ours), those
        whose id is in `from_text` written as text, those in `edit_blocks` as edit blocks;
        `origin="agent"` for a notice or a call of the agent's own."""
        model_ids = model_ids or {}
        return self._add(
            rec.AssistantMessage(
                turn_id=turn_id,
                message_id=message_id,
                parts=parts,
                tool_calls=[
                    rec.ToolCallRecord(
                        call_id=call.call_id,
                        model_call_id=model_ids.get(call.call_id),
                        name=call.name,
                        arguments=dict(call.arguments),
                        from_text=call.call_id in from_text,
                        edit_block=call.call_id in edit_blocks,
                    )
                    for call in calls
                ],
                origin=origin,
                at=self._clock(),
            )
        )

    def tool_result(
        self, shown: ShownCallLike, output: OutputLike, synthetic: rec.Synthetic | None = None
    ) -> rec.ToolResult:
        """The result of a tool call the client was shown as `shown`, from what the tool
        returned (`output`, read whole here); `synthetic` when the runtime made it up (see
        `acp_server.session.records.ToolResult`). The locations are those the client kept: the
        output's, else the announced ones."""
        return self._add(
            rec.ToolResult(
                turn_id=shown.turn_id,
                call_id=shown.call_id,
                status="failed" if output.failed else "completed",
                output=output.text,
                synthetic=synthetic,
                title=shown.title,
                kind=shown.kind,
                diffs=[
                    rec.DiffRecord(path=d.path, old_text=d.old_text, new_text=d.new_text)
                    for d in output.diffs
                ],
                locations=[
                    rec.LocationRecord(path=loc.path, line=loc.line)
                    for loc in output.locations or shown.locations
                ],
                checkpoints=list(output.checkpoints),
                images=[rec.ImagePart(data=i.data, mime_type=i.mime_type) for i in output.images],
                at=self._clock(),
            )
        )

    def synthetic_result(
        self, turn_id: str, call_id: str, synthetic: rec.Synthetic, output: str
    ) -> rec.ToolResult:
        """A failed result the runtime made up for a call it never ran or never saw end (a
        call the turn's end left unstarted, one a crash left open): nothing but the text."""
        return self._add(
            rec.ToolResult(
                turn_id=turn_id,
                call_id=call_id,
                status="failed",
                output=output,
                synthetic=synthetic,
                at=self._clock(),
            )
        )

    def step_ended(self, turn_id: str, step: int, finish: str) -> rec.StepEnd:
        return self._add(rec.StepEnd(turn_id=turn_id, step=step, finish=finish, at=self._clock()))

    def turn_ended(self, turn_id: str, outcome: rec.Outcome) -> rec.TurnEndRecord:
        return self._add(rec.TurnEndRecord(turn_id=turn_id, outcome=outcome, at=self._clock()))

    def plan(self, turn_id: str, entries: Iterable[PlanItemLike]) -> rec.PlanRecord:
        """The agent's complete new plan."""
        return self._add(
            rec.PlanRecord(
                turn_id=turn_id,
                entries=[
                    rec.PlanEntryRecord(content=e.content, priority=e.priority, status=e.status)
                    for e in entries
                ],
                at=self._clock(),
            )
        )

    def compaction(
        self,
        compaction_id: str,
        kept_from: str,
        *,
        summary: str | None,
        turn_id: str | None,
        tokens_before: int,
        tokens_after: int,
    ) -> rec.Compaction:
        return self._add(
            rec.Compaction(
                compaction_id=compaction_id,
                kept_from=kept_from,
                summary=summary,
                turn_id=turn_id,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                at=self._clock(),
            )
        )

    def rewound(
        self,
        rewind_id: str,
        turn_id: str,
        *,
        restored: Iterable[str],
        kept: Iterable[KeptLike],
        commands: Iterable[str],
        tasks: Iterable[str] = (),
    ) -> rec.Rewind:
        """The conversation was cut back to before `turn_id` (see `acp_server.session.rewind`)."""
        return self._add(
            rec.Rewind(
                rewind_id=rewind_id,
                turn_id=turn_id,
                restored=list(restored),
                kept=[
                    rec.RewindKept(path=k.path, reason=k.reason, kept_at=k.kept_at) for k in kept
                ],
                commands=list(commands),
                tasks=list(tasks),
                at=self._clock(),
            )
        )

    # --- the session's settings (see acp_server.session.state) ---------------------------------

    def mode_changed(self, mode: str) -> rec.ModeChange:
        return self._add(rec.ModeChange(mode=mode, at=self._clock()))

    def model_changed(self, model: str) -> rec.ModelChange:
        return self._add(rec.ModelChange(model=model, at=self._clock()))

    def permission_rule(
        self,
        tool_kind: str,
        *,
        allow: bool,
        scope: str,
        workspace: list[str],
    ) -> rec.PermissionRule:
        """An "always" answer, given in `workspace` (see `acp_server.session.state`)."""
        return self._add(
            rec.PermissionRule(
                tool_kind=tool_kind,
                decision="allow" if allow else "reject",
                scope=scope,
                workspace=workspace,
                at=self._clock(),
            )
        )

    def system_prompt(
        self, mode: Literal["append", "override"], text: str
    ) -> rec.SystemPromptChange:
        """The client's system prompt, already cut to its budget."""
        return self._add(rec.SystemPromptChange(mode=mode, text=text, at=self._clock()))

    # --- background items (they belong to the session, not to a turn) --------------------------

    def background_started(
        self, item_id: str, command: str, call_id: str | None
    ) -> rec.BackgroundStart:
        return self._add(
            rec.BackgroundStart(item=item_id, call_id=call_id, command=command, at=self._clock())
        )

    def background_ended(
        self,
        item_id: str,
        how: Literal["exited", "stopped", "unknown"],
        exit_code: int | None = None,
        posix_signal: int | None = None,
    ) -> rec.BackgroundEnd:
        return self._add(
            rec.BackgroundEnd(
                item=item_id,
                how=how,
                exit_code=exit_code,
                posix_signal=posix_signal,
                at=self._clock(),
            )
        )


def new_header(
    session_id: str,
    cwd: str,
    additional_directories: Sequence[str] = (),
    *,
    forked_from: str | None = None,
    forked_at_turn: str | None = None,
    parent_session_id: str | None = None,
    parent_tool_call_id: str | None = None,
) -> JournalHeader:
    """A new session's journal header, stamped now (the store writes it as line 1)."""
    return JournalHeader(
        session_id=session_id,
        cwd=cwd,
        created_at=rec.utc_now(),
        additional_directories=list(additional_directories),
        forked_from=forked_from,
        forked_at_turn=forked_at_turn,
        parent_session_id=parent_session_id,
        parent_tool_call_id=parent_tool_call_id,
    )
