"""The session lifecycle over the journal: wiring a new session (acp/opening.py answered it),
`session/load` (with replay), `resume`, `fork`, `close` and `delete`. `session/list` and the
titles are in listing.py."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from acp_protocol import errors
from acp_protocol.methods import V1
from acp_protocol.newer import LoadSessionWithPrompt, ResumeSessionWithPrompt
from acp_protocol.session import (
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    LoadSessionResponse,
    ResumeSessionResponse,
)
from acp_protocol.unstable import ForkSessionRequest, ForkSessionResponse
from acp_server.agent import cap_client_prompt
from acp_server.rpc.dispatch import Route
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest
from acp_server.session import records as rec
from acp_server.session.fork import fork_point
from acp_server.session.journal_format import (
    JournalError,
    JournalLocked,
    is_session_id,
)
from acp_server.session.state import SessionState
from acp_server.tools.permissions import workspace_key

from ..child_sessions import child_histories, replay_with_children, shows_subagents
from ..context import BridgeContext
from ..custom_commands import refresh_commands
from ..errors import invalid_params, journal_refused, session_in_use, session_not_found
from ..opening import (
    SessionStart,
    create_journal,
    discard,
    probe_sandbox,
    require_absolute,
    require_directory,
)
from ..plans import PlanView, shows_plan_operations
from ..replay import replay_updates
from ..sandbox_availability import tell_about_sandbox
from ..sessions import AcpSession
from ..system_prompt import Requested, requested_prompt
from ..updates import SessionUpdates, shows_compactions
from ..wiring import SessionWiring
from .config_options import SessionConfig
from .listing import derive_title

log = logging.getLogger(__name__)


@dataclass
class SessionMethods:
    """Wiring a new session, `session/load`, `resume`, `fork`, `close` and `delete` of one
    connection."""

    context: BridgeContext
    wiring: SessionWiring
    config: SessionConfig

    def routes(self) -> list[Route[Any]]:
        """This group's methods."""
        return [
            Route(V1.session_load, self.load_session),
            Route(V1.session_resume, self.resume_session),
            Route(V1.session_fork, self.fork_session),
            Route(V1.session_close, self.close_session),
            Route(V1.session_delete, self.delete_session),
        ]

    def start_new(self, start: SessionStart) -> AcpSession:
        """Wire a new session's runtime parts (acp/opening.py answered it, or is answering
        it); when that fails, nothing of it is left behind."""
        try:
            session = self.wiring.start(
                start.session_id, start.cwd, start.extra_roots, start.mcp_servers, [], start.journal
            )
            apply_prompt(session, start.system_prompt)
        except BaseException:
            discard(self.wiring.store, start.journal)
            raise
        log.debug("session %s wired", start.session_id)
        return session

    async def load_session(
        self, request: IncomingRequest, load: LoadSessionWithPrompt
    ) -> LoadSessionResponse:
        await probe_sandbox(self.context)
        system_prompt = requested_prompt(load.system_prompt)
        session = self._reopen(load)
        apply_prompt(session, system_prompt)
        # Replay precedes the response: clients register the session before awaiting it and
        # show history that arrives meanwhile; history after the response is shown late or lost.
        updates = SessionUpdates(self.context.peer, session.id)
        compaction = shows_compactions(self.context.client_capabilities)
        plans = PlanView(shows_plan_operations(self.context.client_capabilities))
        replayed = replay_updates(
            session.log.records, compaction=compaction, plans=plans, cwd=session.cwd
        )
        if shows_subagents(self.context.client_capabilities):
            # Each `task` call followed by its child's announcement and history.
            children = child_histories(self.wiring.store, session.id, session.log.records)
            await replay_with_children(self.context, session.id, replayed, children)
        else:
            for update in replayed:
                await updates.send(update)
        # The session-level updates too: the client knows the session from its request on,
        # and an update after the answer would be the only one outside a prompt (ACP-LOAD-002).
        fallback, session.mode_fallback = session.mode_fallback, None
        await self._tell(session, fallback)
        return LoadSessionResponse(
            modes=self.config.mode_state(session), config_options=self.config.options_for(session)
        )

    async def resume_session(
        self, request: IncomingRequest, resume: ResumeSessionWithPrompt
    ) -> ResumeSessionResponse:
        session = await self.reopen(resume)
        self.tell_after(request, session)
        return ResumeSessionResponse(
            modes=self.config.mode_state(session), config_options=self.config.options_for(session)
        )

    async def reopen(
        self, reopen: ResumeSessionWithPrompt, *, same_cwd: bool = False
    ) -> AcpSession:
        """The session to resume, active (or wired again from its journal), with the client's
        `systemPrompt` if it sent one; `same_cwd`: refuse (-32602) a cwd other than the one
        the session works in (v2)."""
        await probe_sandbox(self.context)
        system_prompt = requested_prompt(reopen.system_prompt)
        session = self._reopen(reopen, same_cwd=same_cwd)
        apply_prompt(session, system_prompt)
        return session

    def tell_after(self, request: IncomingRequest, session: AcpSession) -> None:
        """`_tell` right after the response: a resumed or forked session. A fork's id is new to
        the client until the answer names it, and a client may register a resumed session only
        when its answer comes, as for a new one (updates of an unknown session are dropped)."""
        fallback, session.mode_fallback = session.mode_fallback, None

        async def tell() -> None:
            await self._tell(session, fallback)

        request.after_response.append(tell)

    async def _tell(self, session: AcpSession, fallback: str | None) -> None:
        """What an opened session is told besides its history: its slash commands; why its
        model fell back, if it did; why sandboxed mode is not offered or not restored, if so. A
        session whose journaled mode was not restored also gets its current mode announced,
        after the replayed history whose old switch it supersedes (`fallback`: why)."""
        # Every opened session learns its slash commands, not only a new one.
        await refresh_commands(self.context, session, in_prompt=False)
        await self._tell_model_fallback(session)
        if fallback is not None:
            await self.config.announce_mode(session)
        await tell_about_sandbox(self.context, session.id, fallback)

    async def fork_session(
        self, request: IncomingRequest, fork: ForkSessionRequest
    ) -> ForkSessionResponse:
        """A new session from an existing one's history up to its last ended turn, journaled
        with its origin (see docs/rfc/implemented/feature/2026-12-01-session-fork.md)."""
        await probe_sandbox(self.context)
        require_directory("cwd", fork.cwd)
        extra_roots = list(fork.additional_directories or [])
        for path in extra_roots:
            require_absolute("additionalDirectories", path)
        system_prompt = requested_prompt(fork.system_prompt)
        records, source_workspace = self._source_records(fork.session_id)
        same = source_workspace == workspace_key(fork.cwd, extra_roots)
        point = fork_point(records, same_workspace=same)
        journal = create_journal(
            self.context,
            self.wiring.store,
            fork.cwd,
            extra_roots,
            forked_from=fork.session_id,
            forked_at_turn=point.turn_id,
        )
        session_id = journal.session_id
        try:
            for record in point.records:
                journal.append(record)
            journal.sync()
        except (JournalError, OSError) as exc:
            with contextlib.suppress(JournalError, OSError):
                journal.close()
                self.wiring.store.delete(session_id)  # a fork is whole or absent
            raise RpcError(
                errors.INTERNAL_ERROR, f"cannot write the forked session's journal: {exc}"
            ) from None
        session = self.wiring.start(
            session_id, fork.cwd, extra_roots, list(fork.mcp_servers or []), point.records, journal
        )
        session.title = derive_title(SessionState.of(point.records).first_prompt)
        apply_prompt(session, system_prompt)
        log.info("session %s forked from %s at %s", session_id, fork.session_id, point.turn_id)
        self.tell_after(request, session)
        return ForkSessionResponse(
            session_id=session_id,
            modes=self.config.mode_state(session),
            config_options=self.config.options_for(session),
        )

    def _source_records(self, session_id: str) -> tuple[list[rec.Record], list[str]]:
        """The records of the session to fork and its workspace (`workspace_key`): the
        active one's, or its journal's (opened, repaired and closed again)."""
        active = self.context.sessions.get(session_id)
        if active is not None:
            workspace = workspace_key(active.cwd, active.additional_directories)
            return list(active.log.records), workspace
        if not is_session_id(session_id):
            raise session_not_found(session_id)
        try:
            loaded = self.wiring.store.open(session_id)
        except JournalError as exc:
            raise journal_refused(exc, session_id, "forked") from None
        try:
            loaded.journal.close()
        except JournalError as exc:
            log.warning("closing the journal of %s after reading it failed: %s", session_id, exc)
        ids = self.context.options.ids
        if ids is not None:
            ids.reserve(SessionState.of(loaded.records).ids)
        header = loaded.header
        return loaded.records, workspace_key(header.cwd, header.additional_directories)

    async def _tell_model_fallback(self, session: AcpSession) -> None:
        """A notice when the reopened session's model fell back to the server's."""
        why, session.model_fallback = session.model_fallback, None
        if why is None or session.model is None:
            return
        title = f"The session's model is not available; using {session.model.spec}"
        await self.context.presenter.notice(session.id, "warning", title, why)

    async def close_session(
        self, request: IncomingRequest, close: CloseSessionRequest
    ) -> CloseSessionResponse:
        session = self.context.sessions.get(close.session_id)
        if session is None:
            raise RpcError(
                errors.RESOURCE_NOT_FOUND,
                "Session not found",
                f"no active session {close.session_id!r}",
            )
        await self.wiring.release(session)
        return CloseSessionResponse()

    async def delete_session(
        self, request: IncomingRequest, delete: DeleteSessionRequest
    ) -> DeleteSessionResponse:
        session = self.context.sessions.get(delete.session_id)
        if session is not None:
            await self.wiring.release(session)
        if not is_session_id(delete.session_id):
            return DeleteSessionResponse()  # such a session never existed: silently fine
        try:
            self.wiring.store.delete(delete.session_id)
        except JournalLocked as exc:
            raise session_in_use(exc) from None
        return DeleteSessionResponse()

    def _reopen(
        self, reopen: LoadSessionWithPrompt | ResumeSessionWithPrompt, *, same_cwd: bool = False
    ) -> AcpSession:
        """The active session (only in the cwd it works in), or the one its journal holds,
        wired again in the cwd asked for (`same_cwd`: only in the journal's, as v2 asks)."""
        session_id, cwd = reopen.session_id, reopen.cwd
        extra_roots = list(reopen.additional_directories or [])
        mcp_servers: list[object] = list(reopen.mcp_servers or [])
        require_directory("cwd", cwd)
        for path in extra_roots:
            require_absolute("additionalDirectories", path)
        active = self.context.sessions.get(session_id)
        if active is not None:
            # Open here, it keeps the cwd its tools and roots were wired for: another is
            # refused rather than answered as if taken (v1 moves only a journaled session).
            require_same_cwd(session_id, active.cwd, cwd, open_here=not same_cwd)
            return active
        if not is_session_id(session_id):
            raise session_not_found(session_id)
        try:
            loaded = self.wiring.store.open(session_id)
        except JournalError as exc:
            raise journal_refused(exc, session_id, "loaded") from None
        if same_cwd and loaded.header.cwd != cwd:
            with contextlib.suppress(JournalError):
                loaded.journal.close()
            require_same_cwd(session_id, loaded.header.cwd, cwd)
        if loaded.repaired:
            log.warning("session %s was left open by a crash; its journal was repaired", session_id)
        ids = self.context.options.ids
        if ids is not None:
            # Deterministic turn and message ids restart in every process: skip those the
            # journal already holds, so the session's next turn gets fresh ones.
            ids.reserve(SessionState.of(loaded.records).ids)
        session = self.wiring.start(
            session_id, cwd, extra_roots, mcp_servers, loaded.records, loaded.journal
        )
        session.title = derive_title(SessionState.of(loaded.records).first_prompt)
        return session


def require_same_cwd(
    session_id: str, works_in: str, asked: str, *, open_here: bool = False
) -> None:
    """-32602 for a cwd other than the one the session works in, naming both; `open_here`:
    the session is open in this agent (v1 opens a journaled one in another cwd, not this)."""
    if asked == works_in:
        return
    if open_here:
        raise invalid_params(
            f"session {session_id} is open in this agent and works in {works_in!r}, not "
            f"{asked!r}: open it there, or close it (session/close) and open it again in "
            f"{asked!r}"
        )
    raise invalid_params(
        f"session {session_id} works in {works_in!r}, not {asked!r}: resume it there"
    )


def apply_prompt(session: AcpSession, requested: Requested | None) -> None:
    """Journal the client's prompt with the session, cut to its budget, and use it from the
    next model request."""
    if requested is None:
        return
    mode, text = requested
    text = cap_client_prompt(text)
    session.log.recorder.system_prompt(mode, text)
    if session.client_prompt is not None:
        session.client_prompt.set(mode, text)
