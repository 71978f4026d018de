"""A rewind: the files the file tools changed since a turn put back, and the conversation cut
back to before that turn, as one step that either happens whole or not at all.

The steps, and what a cancel (the `signal`) at each leaves:

1. plan: every changed file is read and compared with what the agent wrote (nothing written);
2. restore: the files are put back one by one, the signal checked before each;
3. record: the `session/rewind` record is appended to the log (one synchronous call, after a
   last check of the signal), then the journal is flushed.

A cancel, or a failure, before step 3's append puts every file already restored back to the
content the agent had left (shielded from cancellation), and appends nothing: the files and the
journal are as they were. Once the record is appended the rewind has happened; the flush after
it is shielded. The guarantee, and what it does not cover (a crash of the process inside step
2), is in docs/rfc/implemented/feature/2026-12-02-checkpoints-and-rewind.md.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from acp_server.cancellation import TurnSignal
from acp_server.ids import IdFactory
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.session.rewind import Turn, changes_since, retained, turns
from acp_server.tools.checkpoint_store import CheckpointStore
from acp_server.tools.checkpoints import Restore, apply, plan_restore, undo
from acp_server.tools.local_files import in_thread
from acp_server.tools.workspace import PathRefused, PathRoots

__all__ = ["RewindDone", "RewindFailed", "RewindSeam", "rewind_to", "session_turns"]

logger = logging.getLogger(__name__)

RewindSeam = Callable[[str], Awaitable[None]]
"""Called at each seam (`"restore"` before each file, `"record"` before the append): tests
cancel there."""


class RewindFailed(Exception):
    """A rewind that did not happen (files and journal as they were); the message says why."""


@dataclass(frozen=True)
class RewindDone:
    """A rewind that happened: its record, and the files already as they were."""

    record: rec.Rewind
    turn: Turn
    unchanged: list[str]
    not_saved: Exception | None = None
    """Why the journal flush after the record failed (disk full...): the rewind happened, and
    the record waits in memory for the next flush that can write it."""


def session_turns(log: SessionLog) -> list[Turn]:
    """The turns still in the session's conversation, numbered from 1."""
    return turns(retained(log.records))


async def rewind_to(
    log: SessionLog,
    turn: Turn,
    *,
    store: CheckpointStore,
    path_roots: PathRoots,
    signal: TurnSignal,
    ids: IdFactory,
    flush: Callable[[], Awaitable[None]] | None = None,
    seam: RewindSeam | None = None,
    restore_files: bool = True,
) -> RewindDone:
    """Rewind `log` to before `turn` (see the module docstring). The caller makes sure no turn
    runs meanwhile; `restore_files=False` cuts the conversation only (a client that restores
    files itself). Raises `TurnAborted` when `signal` aborts before the record, `RewindFailed`
    when a file cannot be put back (both with everything as it was)."""
    records = retained(log.records)
    changes = changes_since(records, turn.turn_id)
    since = f"turn {turn.number}"
    files = changes.files if restore_files else []
    restores, keeps, unchanged = await in_thread(plan_restore, files, store, path_roots, since)
    done: list[Restore] = []
    try:
        for step in restores:
            if seam is not None:
                await seam("restore")
            signal.raise_if_aborted()
            try:
                await in_thread(apply, step)
            except (OSError, PathRefused) as exc:
                raise RewindFailed(f"{step.path} could not be restored: {exc}") from None
            done.append(step)
        if seam is not None:
            await seam("record")
        signal.raise_if_aborted()
    except BaseException as exc:
        with anyio.CancelScope(shield=True):
            failed = await in_thread(undo, done)
        if failed:
            message = (
                "the rewind stopped and these files could not be put back as the agent left "
                "them: " + ", ".join(failed)
            )
            if isinstance(exc, Exception):
                raise RewindFailed(message) from None
            logger.error("%s", message)  # a cancellation of the task itself goes on up
        raise
    # The commit point: no await between the last check and here.
    record = log.recorder.rewound(
        ids("rewind"),
        turn.turn_id,
        restored=[step.path for step in restores],
        kept=keeps,
        commands=changes.commands,
        tasks=changes.tasks,
    )
    not_saved: Exception | None = None
    if flush is not None:
        with anyio.CancelScope(shield=True):
            try:
                await flush()
            except Exception as exc:  # the journal keeps the record in memory (journal.py)
                logger.error("session %s: the rewind was not saved: %s", log.session_id, exc)
                not_saved = exc
    return RewindDone(record, turn, unchanged, not_saved)
