"""`/rewind [N]` and the `_session/rewind` extension: the bridge side of a rewind.

`/rewind` lists the turns still in the conversation; `/rewind N` rewinds to before turn N.
`_session/rewind` takes the AIR session-rewind contract that the Claude and Codex ACP adapters
implement (`sessionId`, `beforeMessage` = the first user message to remove, named by
`messageId`, `messageFingerprint` and `messageOccurrence`, and an optional `resumeAtMessage`
= the last assistant message kept) and answers `{"rewound": true}`, with what happened to the
files under `_meta["acp-server"]`. Either is refused while a turn of the session runs, and
prompts are refused while a rewind runs. `session/cancel`, or `$/cancel_request` for the
request, stops a rewind with the files and the journal as they were (acp_server/agent/rewind.py).
See docs/rfc/implemented/feature/2026-12-02-checkpoints-and-rewind.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from acp_protocol import errors
from acp_protocol.methods import V1
from acp_protocol.session_rewind import HistoryPoint, RewindRequest, RewindResponse
from acp_server.agent import RewindDone, RewindFailed, rewind_to, session_turns
from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.printable import one_line
from acp_server.rpc.dispatch import Route
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest
from acp_server.session import records as rec
from acp_server.session.rewind import Turn, fingerprint, text_of

from .context import BridgeContext
from .rewind_text import rewind_text
from .sessions import AcpSession

META = "acp-server"

LISTED = 100
"""Turns `/rewind` lists at most (the latest)."""


class OurOptions(msgspec.Struct, rename="camel"):
    """`_meta["acp-server"]` of `_session/rewind`."""

    restore_files: bool = True
    """False: cut the conversation only (a client that restores the files itself)."""


def our_options(meta: dict[str, Any] | None) -> OurOptions:
    """Our `_meta` entry of a request (other namespaces are not ours to read)."""
    try:
        return msgspec.convert((meta or {}).get(META) or {}, OurOptions)
    except msgspec.ValidationError as exc:
        raise RpcError(errors.INVALID_PARAMS, "Invalid params", f"_meta.{META}: {exc}") from None


def _assistant_text(message: rec.AssistantMessage) -> str:
    return "".join(p.text for p in message.parts if isinstance(p, rec.TextPart))


def _matches(point: HistoryPoint, message_id: str, text: str) -> bool:
    if point.message_id is not None and point.message_id == message_id:
        return point.message_fingerprint in (None, fingerprint(text))
    return point.message_id is None and point.message_fingerprint == fingerprint(text)


def resolve(turns: list[Turn], request: RewindRequest) -> Turn:
    """The turn whose prompt is `beforeMessage` (by id, else by fingerprint occurrence),
    checked against `resumeAtMessage` when given; -32602 when it names none (reload)."""
    point = request.before_message
    prompts = [t for t in turns if t.prompt is not None]
    found = next((t for t in prompts if t.prompt and t.prompt.message_id == point.message_id), None)
    if found is not None and found.prompt is not None:
        if point.message_fingerprint not in (None, fingerprint(text_of(found.prompt))):
            raise _stale("beforeMessage's fingerprint does not match its message")
    elif point.message_fingerprint is not None:
        same = [
            t
            for t in prompts
            if t.prompt and fingerprint(text_of(t.prompt)) == point.message_fingerprint
        ]
        if 1 <= point.message_occurrence <= len(same):
            found = same[point.message_occurrence - 1]
    if found is None:
        raise _stale(
            f"beforeMessage {point.message_id or point.message_fingerprint} is not a user "
            "prompt still in the session"
        )
    resume = request.resume_at_message
    if resume is not None:
        reply = found.last_reply
        if reply is None or not _matches(resume, reply.message_id, _assistant_text(reply)):
            raise _stale("resumeAtMessage is not the last assistant message before beforeMessage")
    return found


def _stale(why: str) -> RpcError:
    return RpcError(
        errors.INVALID_PARAMS, "Invalid params", f"{why}; load the session again and retry"
    )


@dataclass(frozen=True)
class RewindNotice:
    """What `/rewind N` says once it rewound: the notice under the rewind's id, in the words
    `session/load` and `resume` replay it with; then, if the journal could not take the rewind
    yet, a line saying so under a fresh id (live-only, as the agent's other warnings: it is
    about this moment, not about the conversation)."""

    text: str
    message_id: str
    not_saved: str | None


def not_saved_text(done: RewindDone) -> str | None:
    """The line that says a rewind is not in the journal yet, if it is not."""
    if done.not_saved is None:
        return None
    return (
        f"The rewind is not saved to the data directory yet ({done.not_saved}); it is saved "
        "with the next turn that can be written."
    )


def report(done: RewindDone, cwd: str) -> str:
    """What a rewind did, for the user (`_session/rewind`'s answer: the notice, and whether it
    is saved)."""
    text = rewind_text(done.record, done.turn.number, cwd)
    note = not_saved_text(done)
    return text if note is None else f"{text}\n{note}"


def listing(turns: list[Turn]) -> str:
    """`/rewind` without a number: the turns, and how to rewind to one."""
    if not turns:
        return "There is no turn to rewind to."
    rows = [] if len(turns) <= LISTED else [f"({len(turns) - LISTED} earlier turns not listed)"]
    for turn in turns[-LISTED:]:
        first = (text_of(turn.prompt).strip() or "(no text)").splitlines()[0] if turn.prompt else ""
        text = one_line(first) if turn.prompt is not None else "(no prompt)"
        rows.append(f"{turn.number}. {text[:80]}")
    return (
        "Send /rewind N to cut the conversation back to before turn N and restore the files the "
        "agent's file tools changed since:\n" + "\n".join(rows)
    )


@dataclass
class RewindMethods:
    """`_session/rewind` and `/rewind` of one connection."""

    context: BridgeContext

    def routes(self) -> list[Route[Any]]:
        """This group's methods."""
        return [Route(V1.session_rewind, self.extension)]

    async def extension(self, request: IncomingRequest, asked: RewindRequest) -> RewindResponse:
        """`_session/rewind` (its params decoded by the router)."""
        session = self.context.session(asked.session_id)
        self._check_idle(request, session)
        turn = resolve(session_turns(session.log), asked)
        ours = our_options(asked.meta)
        try:
            done = await self._run(request, session, turn, restore_files=ours.restore_files)
        except TurnAborted:
            raise RpcError(
                errors.REQUEST_CANCELLED,
                "Request cancelled",
                "the rewind was cancelled: the files and the conversation are as they were",
            ) from None
        record = done.record
        return RewindResponse(
            rewound=True,
            meta={
                META: {
                    "turn": turn.number,
                    "restored": record.restored,
                    "notRestored": [
                        {"path": k.path, "reason": k.reason, "keptAt": k.kept_at}
                        if k.kept_at
                        else {"path": k.path, "reason": k.reason}
                        for k in record.kept
                    ],
                    "commands": record.commands,
                    "tasks": record.tasks,
                    "message": report(done, session.cwd),
                    **({"notSaved": str(done.not_saved)} if done.not_saved else {}),
                }
            },
        )

    async def command(
        self, request: IncomingRequest, session: AcpSession, argument: str
    ) -> str | RewindNotice:
        """`/rewind [N]`: the text that answers it, or the notice of the rewind it made."""
        turns = session_turns(session.log)
        if not argument:
            request.admit()
            return listing(turns)
        # ASCII digits only: `str.isdigit` holds for `²`, which int() refuses, and int()
        # refuses more than 4300 digits; no turn number is that long.
        digits = argument.isascii() and argument.isdigit() and len(argument) <= 9
        number = int(argument) if digits else 0
        if not 1 <= number <= len(turns):
            request.admit()
            span = f"1 to {len(turns)}" if turns else "none: there is no turn yet"
            shown = argument if len(argument) <= 40 else argument[:40] + "..."
            return f"The conversation was not rewound: {shown!r} is not a turn number ({span})."
        try:
            done = await self._run(request, session, turns[number - 1])
        except RpcError as exc:
            return f"The conversation was not rewound: {exc.data or exc.message}"
        except TurnAborted:
            return "The rewind was cancelled: the files and the conversation are as they were."
        text = rewind_text(done.record, done.turn.number, session.cwd)
        return RewindNotice(text, done.record.rewind_id, not_saved_text(done))

    @staticmethod
    def _check_idle(request: IncomingRequest, session: AcpSession) -> None:
        """-32600 while a turn or another rewind of the session runs."""
        agent = session.agent
        if agent is not None and agent.status != "idle":
            request.admit()
            raise RpcError(
                errors.INVALID_REQUEST,
                "Invalid request",
                "a turn is running in this session: cancel it (session/cancel) or wait for its "
                "end, then rewind",
            )
        if session.rewind is not None:
            request.admit()
            raise RpcError(errors.INVALID_REQUEST, "Invalid request", "a rewind is already running")

    async def _run(
        self,
        request: IncomingRequest,
        session: AcpSession,
        turn: Turn,
        *,
        restore_files: bool = True,
    ) -> RewindDone:
        """Rewind `session` to before `turn`, unless a turn or another rewind runs."""
        self._check_idle(request, session)
        store = session.toolbox.checkpoint_store
        if store is None:  # a toolbox built without one keeps nothing a rewind could restore
            raise RpcError(errors.INTERNAL_ERROR, "Internal error", "no checkpoints are kept")
        holder = TurnCancellation()
        session.rewind = holder

        def stop() -> None:
            holder.abort(UserCancel())

        request.on_cancel_request = stop
        request.admit()
        try:
            return await rewind_to(
                session.log,
                turn,
                store=store,
                path_roots=session.toolbox.path_roots,
                signal=holder.signal,
                ids=self.context.ids,
                flush=session.journal.flush if session.journal is not None else None,
                restore_files=restore_files,
            )
        except RewindFailed as exc:
            raise RpcError(errors.INTERNAL_ERROR, "Internal error", str(exc)) from None
        finally:
            session.rewind = None
