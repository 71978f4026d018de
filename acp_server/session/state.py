"""What a session's records say about it now: one pass, one owner.

The bridge restores a reopened (or forked) session from this: its permission mode, its
"always" answers, its model, the client's system prompt, its title's first prompt, and the ids
deterministic mode must not hand out again. `acp_server.session.fork` cuts a fork from it. The
record types that hold session settings rather than turn history are listed once, here
(`SETTINGS`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from . import records as rec

__all__ = ["ID_FIELDS", "SETTINGS", "SessionState"]

ID_FIELDS = ("turn_id", "message_id", "rewind_id", "compaction_id", "call_id")
"""The record fields that hold ids the agent made (`acp_server.ids`), a tool call's in its
assistant message too: a reloaded deterministic-mode session reserves them all, or a later
turn, message, rewind, compaction or tool call would reuse one (and `session/load` would replay
a `messageId` or a `toolCallId` twice)."""

SETTINGS: tuple[type[rec.Record], ...] = (
    rec.ModeChange,
    rec.ModelChange,
    rec.PermissionRule,
    rec.SystemPromptChange,
)
"""Records that belong to the session rather than to a turn: each holds from then on (the last
of its kind wins; permission rules add up), and a fork carries them over."""


@dataclass(frozen=True, slots=True)
class SessionState:
    """A session's settings and landmarks, derived from its records by `SessionState.of`."""

    modes: tuple[str, ...] = ()
    """Every permission mode the session switched to, oldest first (see `mode`)."""
    model: str | None = None
    """The model spec the session last switched to; None: it never switched."""
    system_prompt: rec.SystemPromptChange | None = None
    """The client's system prompt that holds (the last one given)."""
    rules: tuple[rec.PermissionRule, ...] = ()
    """Every "always" answer, oldest first, whatever workspace it was given in (see
    `rules_in`)."""
    last_turn_end: int | None = None
    """Index of the last `turn/end` record, where a fork cuts; None: no turn has ended."""
    last_ended_turn: str | None = None
    """The id of that turn."""
    first_prompt: str | None = None
    """The text parts of the session's first prompt (what its title is made from)."""
    ids: frozenset[str] = frozenset()
    """Every id deterministic mode hands out that the records hold (see `ID_FIELDS`)."""

    @classmethod
    def of(cls, records: Sequence[rec.Record]) -> SessionState:
        """Read the records once, oldest first."""
        modes: list[str] = []
        model: str | None = None
        system_prompt: rec.SystemPromptChange | None = None
        rules: list[rec.PermissionRule] = []
        last_end: int | None = None
        last_turn: str | None = None
        first_prompt: str | None = None
        ids: set[str] = set()
        for index, record in enumerate(records):
            if isinstance(record, rec.ModeChange):
                modes.append(record.mode)
            elif isinstance(record, rec.ModelChange):
                model = record.model
            elif isinstance(record, rec.SystemPromptChange):
                system_prompt = record
            elif isinstance(record, rec.PermissionRule):
                rules.append(record)
            elif isinstance(record, rec.TurnEndRecord):
                last_end, last_turn = index, record.turn_id
            elif (
                isinstance(record, rec.UserMessage)
                and record.origin == "prompt"
                and first_prompt is None
            ):
                first_prompt = "\n".join(
                    p.text for p in record.content if isinstance(p, rec.TextPart)
                )
            for name in ID_FIELDS:
                value = getattr(record, name, None)
                if isinstance(value, str):
                    ids.add(value)
            if isinstance(record, rec.AssistantMessage):
                ids.update(call.call_id for call in record.tool_calls)
        return cls(
            modes=tuple(modes),
            model=model,
            system_prompt=system_prompt,
            rules=tuple(rules),
            last_turn_end=last_end,
            last_ended_turn=last_turn,
            first_prompt=first_prompt,
            ids=frozenset(ids),
        )

    def mode(self, known: Collection[str]) -> str | None:
        """The last recorded mode among `known` (a journal may name a mode this version does
        not have: the one before it holds); None if there is none."""
        for mode in reversed(self.modes):
            if mode in known:
                return mode
        return None

    def rules_in(self, workspace: Sequence[str]) -> list[rec.PermissionRule]:
        """The "always" answers that hold in `workspace` (resolved cwd, then additional
        directories): those given there, and those written before rules named a workspace. A
        rule given in another workspace (a journal loaded elsewhere) stays there."""
        here = list(workspace)
        return [rule for rule in self.rules if rule.workspace is None or rule.workspace == here]
