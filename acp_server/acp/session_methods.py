"""The session methods over the journal: new, load (with replay), resume, fork, list, close,
delete.

A session's title comes from its first prompt; `session/list` pages with an opaque cursor.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import msgspec

from acp_protocol import errors
from acp_protocol.session import (
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    NewSessionRequest,
    NewSessionResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionInfo,
)
from acp_protocol.unstable import ForkSessionRequest, ForkSessionResponse
from acp_server.ids import new_session_id
from acp_server.rpc.handlers import RpcError, decode_params
from acp_server.rpc.peer import IncomingRequest
from acp_server.session import records as rec
from acp_server.session.fork import fork_point
from acp_server.session.journal import Journal
from acp_server.session.journal_format import (
    JournalCorrupt,
    JournalError,
    JournalHeader,
    JournalLocked,
    JournalNotFound,
    is_session_id,
)

from .context import BridgeContext, session_not_found
from .modes import SessionConfig, available_commands, mode_state
from .notices import send_notice
from .replay import replay_updates
from .sessions import AcpSession
from .updates import SessionUpdates, shows_compactions
from .wiring import SessionWiring

log = logging.getLogger(__name__)

LIST_PAGE_SIZE = 50
TITLE_LENGTH = 60


def derive_title(text: str | None) -> str | None:
    """A session title from its first prompt: the first non-blank line, shortened."""
    if not text:
        return None
    for line in text.splitlines():
        words = " ".join(line.split())
        if words:
            return words if len(words) <= TITLE_LENGTH else words[: TITLE_LENGTH - 1] + "\u2026"
    return None


def first_prompt_text(records: Sequence[rec.Record]) -> str | None:
    """The text of the session's first prompt, if it has one."""
    for record in records:
        if isinstance(record, rec.UserMessage) and record.origin == "prompt":
            return "\n".join(p.text for p in record.content if isinstance(p, rec.TextPart))
    return None


@dataclass
class SessionMethods:
    """`session/new`, `load`, `resume`, `list`, `close` and `delete` of one connection."""

    context: BridgeContext
    wiring: SessionWiring
    config: SessionConfig

    async def new_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> NewSessionResponse:
        new = decode_params(params, NewSessionRequest)
        _require_absolute("cwd", new.cwd)
        extra_roots = list(new.additional_directories or [])
        for path in extra_roots:
            _require_absolute("additionalDirectories", path)
        session_id, journal = self._create_journal(new.cwd, extra_roots)
        session = self.wiring.start(
            session_id, new.cwd, extra_roots, list(new.mcp_servers), [], journal
        )
        log.info("session %s created in %s", session_id, new.cwd)
        self._announce_commands(request, session_id)
        return NewSessionResponse(
            session_id=session_id,
            modes=mode_state(session.policy.mode),
            config_options=self.config.options_for(session),
        )

    async def load_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> LoadSessionResponse:
        session = self._reopen(decode_params(params, LoadSessionRequest))
        # Replay precedes the response: clients register the session before awaiting it and
        # show history that arrives meanwhile; history after the response is shown late or lost.
        updates = SessionUpdates(self.context.peer, session.id)
        compaction = shows_compactions(self.context.client_capabilities)
        for update in replay_updates(session.log.records, compaction=compaction):
            await updates.send(update)
        self._announce_commands(request, session.id)
        self._announce_fallback(request, session)
        return LoadSessionResponse(
            modes=mode_state(session.policy.mode), config_options=self.config.options_for(session)
        )

    async def resume_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> ResumeSessionResponse:
        session = self._reopen(decode_params(params, ResumeSessionRequest))
        self._announce_commands(request, session.id)
        self._announce_fallback(request, session)
        return ResumeSessionResponse(
            modes=mode_state(session.policy.mode), config_options=self.config.options_for(session)
        )

    async def list_sessions(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> ListSessionsResponse:
        query = decode_params(params, ListSessionsRequest)
        start = _decode_cursor(query.cursor) if isinstance(query.cursor, str) else 0
        summaries = [
            s
            for s in self.wiring.store.list()
            if s.parent_session_id is None
            and (not isinstance(query.cwd, str) or s.cwd == query.cwd)
        ]
        summaries.sort(key=lambda s: (s.updated_at, s.session_id), reverse=True)
        page = summaries[start : start + LIST_PAGE_SIZE]
        end = start + len(page)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=s.session_id,
                    cwd=s.cwd,
                    additional_directories=s.additional_directories,
                    title=derive_title(s.first_prompt_text),
                    updated_at=s.updated_at,
                )
                for s in page
            ],
            next_cursor=_encode_cursor(end) if end < len(summaries) else msgspec.UNSET,
        )

    async def close_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> CloseSessionResponse:
        close = decode_params(params, CloseSessionRequest)
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
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> DeleteSessionResponse:
        delete = decode_params(params, DeleteSessionRequest)
        session = self.context.sessions.get(delete.session_id)
        if session is not None:
            await self.wiring.release(session)
        if not is_session_id(delete.session_id):
            return DeleteSessionResponse()  # such a session never existed: silently fine
        try:
            self.wiring.store.delete(delete.session_id)
        except JournalLocked as exc:
            raise RpcError(errors.RESOURCE_NOT_FOUND, "Session is in use", str(exc)) from None
        return DeleteSessionResponse()

    async def fork_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> ForkSessionResponse:
        """A new session from an existing one's history up to its last ended turn, journaled
        with its origin (see docs/rfc/implemented/feature/2026-12-01-session-fork.md)."""
        fork = decode_params(params, ForkSessionRequest)
        _require_absolute("cwd", fork.cwd)
        extra_roots = list(fork.additional_directories or [])
        for path in extra_roots:
            _require_absolute("additionalDirectories", path)
        point = fork_point(self._source_records(fork.session_id))
        session_id, journal = self._create_journal(
            fork.cwd, extra_roots, forked_from=fork.session_id, forked_at_turn=point.turn_id
        )
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
        session.title = derive_title(first_prompt_text(point.records))
        log.info("session %s forked from %s at %s", session_id, fork.session_id, point.turn_id)
        self._announce_commands(request, session_id)
        return ForkSessionResponse(
            session_id=session_id,
            modes=mode_state(session.policy.mode),
            config_options=self.config.options_for(session),
        )

    def _source_records(self, session_id: str) -> list[rec.Record]:
        """The records of the session to fork: the active one's, or its journal's (opened,
        repaired and closed again)."""
        active = self.context.sessions.get(session_id)
        if active is not None:
            return list(active.log.records)
        if not is_session_id(session_id):
            raise session_not_found(session_id)
        try:
            loaded = self.wiring.store.open(session_id)
        except JournalNotFound:
            raise session_not_found(session_id) from None
        except JournalLocked as exc:
            raise RpcError(errors.RESOURCE_NOT_FOUND, "Session is in use", str(exc)) from None
        except JournalError as exc:
            raise RpcError(
                errors.RESOURCE_NOT_FOUND, "Session cannot be forked", str(exc)
            ) from None
        try:
            loaded.journal.close()
        except JournalError as exc:
            log.warning("closing the journal of %s after reading it failed: %s", session_id, exc)
        ids = self.context.options.ids
        if ids is not None:
            ids.reserve(_record_ids(loaded.records))
        return loaded.records

    def _create_journal(
        self,
        cwd: str,
        extra_roots: list[str],
        *,
        forked_from: str | None = None,
        forked_at_turn: str | None = None,
    ) -> tuple[str, Journal]:
        """A new session id and its journal, created with its header."""
        ids = self.context.options.ids
        session_id = new_session_id(ids)
        while ids is not None and self.wiring.store.exists(session_id):
            # Deterministic ids restart at sess_0001 in every process; skip the journals an
            # earlier process left in this data directory.
            session_id = new_session_id(ids)
        header = JournalHeader(
            session_id=session_id,
            cwd=cwd,
            created_at=rec.utc_now(),
            additional_directories=extra_roots,
            forked_from=forked_from,
            forked_at_turn=forked_at_turn,
        )
        try:
            return session_id, self.wiring.store.create(header)
        except (JournalError, OSError) as exc:
            raise RpcError(
                errors.INTERNAL_ERROR,
                f"cannot create the session journal under {self.wiring.store.sessions_dir}: {exc}"
                " (check that --data-dir is writable)",
            ) from None

    def _announce_commands(self, request: IncomingRequest, session_id: str) -> None:
        """Send the session's slash commands once the response that opened it is out: every
        opened session (new, load, resume, fork), since clients keep the list per session."""
        commands = available_commands(self.context.options.offered_models)

        async def announce() -> None:
            await SessionUpdates(self.context.peer, session_id).send(commands)

        request.after_response.append(announce)

    def _announce_fallback(self, request: IncomingRequest, session: AcpSession) -> None:
        """A notice, after the answer, when the reopened session's model fell back."""
        why = session.model_fallback
        if why is None or session.model is None:
            return
        title = f"The session's model is not available; using {session.model.spec}"

        async def announce() -> None:
            await send_notice(self.context, session.id, "warning", title, why)

        request.after_response.append(announce)

    def _reopen(self, reopen: LoadSessionRequest | ResumeSessionRequest) -> AcpSession:
        """The active session, or the one its journal holds, wired again."""
        session_id, cwd = reopen.session_id, reopen.cwd
        extra_roots = list(reopen.additional_directories or [])
        mcp_servers: list[object] = list(reopen.mcp_servers or [])
        _require_absolute("cwd", cwd)
        for path in extra_roots:
            _require_absolute("additionalDirectories", path)
        active = self.context.sessions.get(session_id)
        if active is not None:
            return active
        if not is_session_id(session_id):
            raise session_not_found(session_id)
        try:
            loaded = self.wiring.store.open(session_id)
        except JournalNotFound:
            raise session_not_found(session_id) from None
        except JournalCorrupt as exc:
            raise RpcError(
                errors.RESOURCE_NOT_FOUND, "Session cannot be loaded", str(exc)
            ) from None
        except JournalLocked as exc:
            raise RpcError(errors.RESOURCE_NOT_FOUND, "Session is in use", str(exc)) from None
        except JournalError as exc:
            raise RpcError(
                errors.RESOURCE_NOT_FOUND, "Session cannot be loaded", str(exc)
            ) from None
        if loaded.repaired:
            log.warning("session %s had a turn left open by a crash; closed it", session_id)
        ids = self.context.options.ids
        if ids is not None:
            # Deterministic turn and message ids restart in every process: skip those the
            # journal already holds, so the session's next turn gets fresh ones.
            ids.reserve(_record_ids(loaded.records))
        session = self.wiring.start(
            session_id, cwd, extra_roots, mcp_servers, loaded.records, loaded.journal
        )
        session.title = derive_title(first_prompt_text(loaded.records))
        return session


def _record_ids(records: Sequence[rec.Record]) -> Iterator[str]:
    """The turn and message ids that records hold."""
    for record in records:
        for name in ("turn_id", "message_id"):
            value = getattr(record, name, None)
            if isinstance(value, str):
                yield value


def _require_absolute(field: str, path: str) -> None:
    if not os.path.isabs(path):
        raise RpcError(
            errors.INVALID_PARAMS, "Invalid params", f"{field} must be an absolute path: {path!r}"
        )


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"v1:{offset}".encode()).decode()


def _decode_cursor(cursor: str) -> int:
    try:
        version, offset = base64.urlsafe_b64decode(cursor.encode()).decode().split(":")
        value = int(offset)
    except (ValueError, UnicodeDecodeError):
        value = -1
        version = ""
    if version != "v1" or value < 0:
        raise RpcError(errors.INVALID_PARAMS, "Invalid params", f"invalid cursor {cursor!r}")
    return value
