"""Session lifecycle over the journal: new, load (with replay), resume, list, close, delete.

Every session is journaled under the data directory from the moment it exists: each record is
written as it is appended, and the journal is fsynced at every turn end (before the prompt is
answered) and on close. So whatever a client saw acknowledged survives a crash. See
docs/rfc/implemented/architecture/2026-11-30-session-journal.md.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from acp_server.rpc.dispatch import RpcError, decode_params
from acp_server.rpc.peer import IncomingRequest
from acp_server.session import records as rec
from acp_server.session.journal import Journal, JournalStore
from acp_server.session.journal_format import (
    JournalCorrupt,
    JournalError,
    JournalHeader,
    JournalLocked,
    JournalNotFound,
    is_session_id,
)
from acp_server.session.log import SessionLog
from protocol import errors
from protocol.session import (
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
from protocol.session_update import SessionInfoUpdate

from .replay import replay_updates
from .sessions import AcpSession, new_session_id
from .updates import SessionUpdates

if TYPE_CHECKING:
    from .connection import AcpConnection

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


class SessionLifecycle:
    """The session methods of one connection."""

    def __init__(self, connection: AcpConnection, data_dir: Path) -> None:
        self._connection = connection
        self.store = JournalStore(data_dir)

    async def new_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> NewSessionResponse:
        new = decode_params(params, NewSessionRequest)
        _require_absolute("cwd", new.cwd)
        extra_roots = list(new.additional_directories or [])
        for path in extra_roots:
            _require_absolute("additionalDirectories", path)
        session_id = new_session_id()
        header = JournalHeader(
            session_id=session_id,
            cwd=new.cwd,
            created_at=rec.utc_now(),
            additional_directories=extra_roots,
        )
        try:
            journal = self.store.create(header)
        except JournalError as exc:
            raise RpcError(errors.INTERNAL_ERROR, f"cannot create the session: {exc}") from None
        self._start(session_id, new.cwd, extra_roots, list(new.mcp_servers), [], journal)
        log.info("session %s created in %s", session_id, new.cwd)
        return NewSessionResponse(session_id=session_id)

    async def load_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> LoadSessionResponse:
        load = decode_params(params, LoadSessionRequest)
        session = self._reopen(
            load.session_id, load.cwd, load.additional_directories or [], list(load.mcp_servers)
        )
        # Replay precedes the response: clients register the session before awaiting it and
        # show history that arrives meanwhile; history after the response is shown late or lost.
        updates = SessionUpdates(self._connection.peer, session.id)
        for update in replay_updates(session.log.records):
            await updates.send(update)
        return LoadSessionResponse()

    async def resume_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> ResumeSessionResponse:
        resume = decode_params(params, ResumeSessionRequest)
        self._reopen(
            resume.session_id,
            resume.cwd,
            resume.additional_directories or [],
            list(resume.mcp_servers or []),
        )
        return ResumeSessionResponse()

    async def list_sessions(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> ListSessionsResponse:
        query = decode_params(params, ListSessionsRequest)
        start = _decode_cursor(query.cursor) if isinstance(query.cursor, str) else 0
        summaries = [
            s
            for s in self.store.list()
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
        session = self._connection.sessions.get(close.session_id)
        if session is None:
            raise RpcError(
                errors.RESOURCE_NOT_FOUND,
                "Session not found",
                f"no active session {close.session_id!r}",
            )
        await self.release(session)
        return CloseSessionResponse()

    async def delete_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> DeleteSessionResponse:
        delete = decode_params(params, DeleteSessionRequest)
        session = self._connection.sessions.get(delete.session_id)
        if session is not None:
            await self.release(session)
        if not is_session_id(delete.session_id):
            return DeleteSessionResponse()  # such a session never existed: silently fine
        try:
            self.store.delete(delete.session_id)
        except JournalLocked as exc:
            raise RpcError(errors.RESOURCE_NOT_FOUND, "Session is in use", str(exc)) from None
        return DeleteSessionResponse()

    async def release(self, session: AcpSession, *, cancel_first: bool = True) -> None:
        """Stop a session as `session/cancel` would, dispose its agent, close its journal."""
        agent = session.agent
        if agent is not None and cancel_first:
            from acp_server.agent.cancellation import UserCancel

            agent.cancel(UserCancel())
        if session.handle is not None:
            await session.handle.dispose()
        if session.journal is not None:
            try:
                session.journal.close()
            except JournalError as exc:
                log.error("closing the journal of %s failed: %s", session.id, exc)
        self._connection.sessions.remove(session.id)

    async def announce_title(self, session: AcpSession, text: str | None) -> None:
        """Send the session's title once, derived from its first prompt."""
        if session.title is not None:
            return
        session.title = derive_title(text)
        if session.title is not None:
            await SessionUpdates(self._connection.peer, session.id).send(
                SessionInfoUpdate(title=session.title, updated_at=rec.utc_now())
            )

    # -- internals -----------------------------------------------------------------------

    def _reopen(
        self, session_id: str, cwd: str, extra_roots: Sequence[str], mcp_servers: list[object]
    ) -> AcpSession:
        _require_absolute("cwd", cwd)
        for path in extra_roots:
            _require_absolute("additionalDirectories", path)
        active = self._connection.sessions.get(session_id)
        if active is not None:
            return active
        if not is_session_id(session_id):
            raise _not_found(session_id)
        try:
            loaded = self.store.open(session_id)
        except JournalNotFound:
            raise _not_found(session_id) from None
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
        session = self._start(
            session_id, cwd, list(extra_roots), mcp_servers, loaded.records, loaded.journal
        )
        session.title = derive_title(first_prompt_text(loaded.records))
        return session

    def _start(
        self,
        session_id: str,
        cwd: str,
        extra_roots: list[str],
        mcp_servers: list[object],
        records: list[rec.Record],
        journal: Journal,
    ) -> AcpSession:
        connection = self._connection
        log_ = SessionLog(session_id, records)
        log_.on_append(journal.append)
        handle = None
        model = connection.options.model
        if model is not None:
            from acp_server.agent.agent import spawn_agent
            from acp_server.agent.loop import AgentConfig

            handle = spawn_agent(
                log_,
                AgentConfig(model=model),
                connection.task_group,
                durability_flush=journal.flush,
            )
            handle.agent.subscribe(SessionUpdates(connection.peer, session_id))
        session = AcpSession(session_id, cwd, handle, log_, journal, extra_roots, list(mcp_servers))
        connection.sessions.add(session)
        return session


def _not_found(session_id: str) -> RpcError:
    return RpcError(errors.RESOURCE_NOT_FOUND, "Session not found", f"no session {session_id!r}")


def _require_absolute(field: str, path: str) -> None:
    import os

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
