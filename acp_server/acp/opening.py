"""`session/new` up to its answer, without the runtime: the params decoded and checked, the
journal created, the sandbox probed, and the response the wired session will stand by.

The user can type once `session/new` is answered; everything that answer needs is here, and
nothing here imports the agent, the tools or the model adapters. The connection
(acp/connection.py) wires the session's runtime parts from the `SessionStart` afterwards (at
once when the runtime is already loaded, else once the warm-up has loaded it); every later
call waits for that. See docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass

from acp_protocol import errors
from acp_protocol.newer import NewSessionWithPrompt
from acp_protocol.session import NewSessionResponse
from acp_server.ids import new_session_id
from acp_server.rpc.handlers import RpcError
from acp_server.session.journal import Journal, JournalStore
from acp_server.session.journal_format import JournalError, JournalExists
from acp_server.session.recorder import new_header

from .command_listing import advertise
from .context import BridgeContext
from .errors import invalid_params
from .mode_options import (
    config_options,
    mode_state,
    offered_modes,
    starting_mode,
)
from .sandbox_availability import tell_about_sandbox
from .system_prompt import Requested, requested_prompt

log = logging.getLogger(__name__)

DETERMINISTIC_REASON = (
    "not offered under --deterministic, so transcripts do not depend on whether bubblewrap is "
    "installed"
)


@dataclass
class SessionStart:
    """A session the client has been told about (its journal exists) whose runtime parts are
    still to be wired."""

    session_id: str
    cwd: str
    extra_roots: list[str]
    mcp_servers: list[object]
    journal: Journal
    mode_fallback: str | None
    """Why it does not start in the mode it asked for, if so (the wiring finds the same)."""
    system_prompt: Requested | None
    """The client's `systemPrompt`, checked; applied when the session is wired."""


class SessionOpening:
    """The part of `session/new` its answer waits for."""

    def __init__(self, context: BridgeContext, store: JournalStore) -> None:
        self._context = context
        self.store = store

    async def open(self, new: NewSessionWithPrompt) -> tuple[SessionStart, NewSessionResponse]:
        """Check the params, create the journal, probe the sandbox; the session's start and
        its answer. Nothing is left behind when this raises."""
        require_directory("cwd", new.cwd)
        extra_roots = list(new.additional_directories or [])
        for path in extra_roots:
            require_absolute("additionalDirectories", path)
        system_prompt = requested_prompt(new.system_prompt)
        journal = create_journal(self._context, self.store, new.cwd, extra_roots)
        try:
            await probe_sandbox(self._context)
        except BaseException:
            discard(self.store, journal)
            raise
        context = self._context
        _, fallback = starting_mode(context.options.mode, context.bwrap, context.sandbox_missing)
        mcp_servers: list[object] = list(new.mcp_servers)
        start = SessionStart(
            journal.session_id, new.cwd, extra_roots, mcp_servers, journal, fallback, system_prompt
        )
        log.info("session %s created in %s", start.session_id, start.cwd)
        return start, self.response(start.session_id)

    async def announce(self, start: SessionStart) -> None:
        """After a new session's answer: its slash commands, and why sandboxed mode is not
        offered or not used, if so."""
        context = self._context
        await advertise(context, start.session_id, start.cwd, always=True)
        await tell_about_sandbox(context, start.session_id, start.mode_fallback)

    def response(self, session_id: str) -> NewSessionResponse:
        """The answer of a new session: its mode and options are those the wiring gives it
        (the same `starting_mode`, the server's model), computed without it."""
        context = self._context
        options = context.options
        mode, _ = starting_mode(options.mode, context.bwrap, context.sandbox_missing)
        modes = offered_modes(context.bwrap is not None)
        model = None
        if options.model is not None:
            model = options.model_spec or options.model.name
        return NewSessionResponse(
            session_id=session_id,
            modes=mode_state(mode, modes),
            config_options=config_options(mode, model, options.offered_models, modes),
        )


def discard(store: JournalStore, journal: Journal) -> None:
    """Undo a session that cannot start: no journal holding its lock (an undeletable ghost),
    no open descriptor."""
    with contextlib.suppress(JournalError, OSError):
        journal.close()
    with contextlib.suppress(JournalError, OSError):
        store.delete(journal.session_id)


async def probe_sandbox(context: BridgeContext) -> None:
    """Ask, once, whether bwrap works here; remember the answer in the context."""
    if context.bwrap is not None or context.sandbox_missing:
        return
    if context.options.deterministic:
        # Whether bwrap works differs between machines; a golden transcript must not. Nobody
        # is told: leaving the mode out is what was asked for, not a fault of the machine (a
        # `/mode sandboxed` still answers with the reason).
        context.sandbox_missing = DETERMINISTIC_REASON
        return
    bwrap, why = await context.sandbox_probe.check(context.processes)
    context.bwrap, context.sandbox_missing = bwrap, why
    context.sandbox_notice_due = bwrap is None


def create_journal(
    context: BridgeContext,
    store: JournalStore,
    cwd: str,
    extra_roots: list[str],
    *,
    forked_from: str | None = None,
    forked_at_turn: str | None = None,
) -> Journal:
    """A new session's journal under a fresh id.

    Deterministic ids (`sess_0001`, ...) are a counter per process: ids an earlier process
    left in the data directory are skipped, and if another process running at the same time
    takes an id between the check and the create (which is atomic: a hard link), this one
    takes the next. So ids never collide, and one process alone on a data directory still
    numbers its sessions reproducibly.
    """
    ids = context.options.ids
    session_id = new_session_id(ids)
    while True:
        while ids is not None and store.exists(session_id):
            session_id = new_session_id(ids)
        header = new_header(
            session_id,
            cwd,
            extra_roots,
            forked_from=forked_from,
            forked_at_turn=forked_at_turn,
        )
        try:
            return store.create(header)
        except JournalExists:
            if ids is None:
                raise RpcError(
                    errors.INTERNAL_ERROR,
                    f"session id {session_id} is already taken under {store.sessions_dir}",
                ) from None
            session_id = new_session_id(ids)
        except (JournalError, OSError) as exc:
            raise RpcError(
                errors.INTERNAL_ERROR,
                f"cannot create the session journal under {store.sessions_dir}: {exc}"
                " (check that --data-dir is writable)",
            ) from None


def require_absolute(field: str, path: str) -> None:
    """-32602 unless `path` is absolute and free of NUL bytes."""
    if "\x00" in path:
        # No file system takes one; caught here, before anything is created for the session.
        raise invalid_params(f"{field} contains a NUL byte: {path!r}")
    if not os.path.isabs(path):
        raise invalid_params(f"{field} must be an absolute path: {path!r}")


def require_directory(field: str, path: str) -> None:
    """An absolute path to an existing directory (links followed): a session never starts,
    and nothing is created for it, in a cwd that is missing or a file."""
    require_absolute(field, path)
    if not os.path.isdir(path):
        what = "does not exist" if not os.path.lexists(path) else "is not a directory"
        raise invalid_params(f"{field} {what}: {path!r}")
