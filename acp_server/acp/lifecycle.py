"""Session lifecycle over the journal: new, load (with replay), resume, list, close, delete.

Every session is journaled under the data directory from the moment it exists: each record is
written as it is appended, and the journal is fsynced at every turn end (before the prompt is
answered) and on close. So whatever a client saw acknowledged survives a crash. See
docs/rfc/implemented/architecture/2026-11-30-session-journal.md.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from acp_server.agent.cancellation import TurnSignal
from acp_server.models.base import ModelConfigError
from acp_server.models.switchable import SwitchableModel
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
from acp_server.tools.base import Tool, ToolKind
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.permissions import (
    MODE_IDS,
    Mode,
    ModeRefused,
    PermissionPolicy,
    check_mode,
)
from acp_server.tools.text_window import TextWindow
from acp_server.tools.workspace import CommandRunner, FileAccess, Sandbox
from protocol import errors
from protocol.mcp import McpServer
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
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from protocol.session_config import SessionConfigOption
from protocol.session_update import ConfigOptionUpdate, CurrentModeUpdate, SessionInfoUpdate

from .client_requests import AcpPermissionAsker, ClientFiles, ClientTerminals
from .modes import COMMANDS, MODE_OPTION_ID, MODEL_OPTION_ID, config_options, mode_state
from .replay import replay_updates
from .sessions import AcpSession, new_session_id
from .updates import SessionUpdates

if TYPE_CHECKING:
    from acp_server.agent.agent import Agent
    from acp_server.mcp import McpServers

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
        self._mcp: dict[str, McpServers] = {}

    async def new_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> NewSessionResponse:
        new = decode_params(params, NewSessionRequest)
        _require_absolute("cwd", new.cwd)
        extra_roots = list(new.additional_directories or [])
        for path in extra_roots:
            _require_absolute("additionalDirectories", path)
        ids = self._connection.options.ids
        session_id = new_session_id(ids)
        while ids is not None and self.store.exists(session_id):
            # Deterministic ids restart at sess_0001 in every process; skip the journals an
            # earlier process left in this data directory.
            session_id = new_session_id(ids)
        header = JournalHeader(
            session_id=session_id,
            cwd=new.cwd,
            created_at=rec.utc_now(),
            additional_directories=extra_roots,
        )
        try:
            journal = self.store.create(header)
        except (JournalError, OSError) as exc:
            raise RpcError(
                errors.INTERNAL_ERROR,
                f"cannot create the session journal under {self.store.sessions_dir}: {exc}"
                " (check that --data-dir is writable)",
            ) from None
        session = self._start(session_id, new.cwd, extra_roots, list(new.mcp_servers), [], journal)
        log.info("session %s created in %s", session_id, new.cwd)

        async def announce_commands() -> None:
            await SessionUpdates(self._connection.peer, session_id).send(COMMANDS)

        request.after_response.append(announce_commands)
        mode = session.policy.mode
        return NewSessionResponse(
            session_id=session_id,
            modes=mode_state(mode),
            config_options=self._config_options(session),
        )

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
        mode = session.policy.mode
        return LoadSessionResponse(
            modes=mode_state(mode), config_options=self._config_options(session)
        )

    async def resume_session(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> ResumeSessionResponse:
        resume = decode_params(params, ResumeSessionRequest)
        session = self._reopen(
            resume.session_id,
            resume.cwd,
            resume.additional_directories or [],
            list(resume.mcp_servers or []),
        )
        mode = session.policy.mode
        return ResumeSessionResponse(
            modes=mode_state(mode), config_options=self._config_options(session)
        )

    async def set_mode(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> SetSessionModeResponse:
        change = decode_params(params, SetSessionModeRequest)
        await self.change_mode(self.active(change.session_id), change.mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, request: IncomingRequest, params: msgspec.Raw | None
    ) -> SetSessionConfigOptionResponse:
        change = decode_params(params, SetSessionConfigOptionRequest)
        session = self.active(change.session_id)
        if change.config_id not in (MODE_OPTION_ID, MODEL_OPTION_ID) or (
            change.config_id == MODEL_OPTION_ID and session.model is None
        ):
            raise RpcError(
                errors.INVALID_PARAMS,
                "Invalid params",
                f"unknown config option {change.config_id!r}",
            )
        if not isinstance(change.value, str):
            raise RpcError(
                errors.INVALID_PARAMS, "Invalid params", f"{change.config_id} takes a string value"
            )
        if change.config_id == MODE_OPTION_ID:
            await self.change_mode(session, change.value)
        else:
            self.change_model(session, change.value)
        return SetSessionConfigOptionResponse(config_options=self._config_options(session))

    def change_model(self, session: AcpSession, spec: str) -> None:
        """Switch the session's model from its next request on, and remember it."""
        offered = self._connection.options.offered_models
        if session.model is None or spec not in offered:
            raise RpcError(
                errors.INVALID_PARAMS,
                "Invalid params",
                f"model {spec!r} is not offered; offered: {', '.join(offered)}",
            )
        try:
            session.model.switch(spec)
        except (ModelConfigError, ValueError) as exc:
            raise RpcError(errors.INVALID_PARAMS, "Invalid params", str(exc)) from None
        session.log.append(rec.ModelChange(model=spec, at=rec.utc_now()))

    def _config_options(self, session: AcpSession) -> list[SessionConfigOption]:
        options = self._connection.options
        return config_options(
            session.policy.mode,
            session.model.spec if session.model is not None else None,
            options.offered_models,
        )

    async def change_mode(self, session: AcpSession, mode: str) -> None:
        """Switch the permission mode, remember it, and tell the client both ways."""
        try:
            checked = check_mode(mode)
        except ModeRefused as exc:
            raise RpcError(errors.INVALID_PARAMS, "Invalid params", str(exc)) from None
        session.policy.mode = checked
        session.log.append(rec.ModeChange(mode=checked, at=rec.utc_now()))
        updates = SessionUpdates(self._connection.peer, session.id)
        await updates.send(CurrentModeUpdate(current_mode_id=checked))
        await updates.send(ConfigOptionUpdate(config_options=self._config_options(session)))

    def active(self, session_id: str) -> AcpSession:
        """The active session with this id, or -32002."""
        session = self._connection.sessions.get(session_id)
        if session is None:
            raise _not_found(session_id)
        return session

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
        mcp = self._mcp.pop(session.id, None)
        if mcp is not None:
            await mcp.aclose()
        if session.journal is not None:
            try:
                session.journal.close()
            except JournalError as exc:
                log.error("closing the journal of %s failed: %s", session.id, exc)
        self._connection.sessions.remove(session.id)

    async def before_prompt(self, session: AcpSession) -> None:
        """Wait (bounded) for the session's MCP servers; report each failed one once."""
        mcp = self._mcp.get(session.id)
        if mcp is None:
            return
        await mcp.ready()
        failures = mcp.take_failures()
        if failures:
            from acp_server.agent.loop import random_ids
            from protocol.content import TextContent
            from protocol.session_update import AgentMessageChunk

            ids = self._connection.options.ids or random_ids
            await SessionUpdates(self._connection.peer, session.id).send(
                AgentMessageChunk(
                    content=TextContent(text="\n".join(failures) + "\n"), message_id=ids("msg")
                )
            )

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
        ids = self._connection.options.ids
        if ids is not None:
            # Deterministic turn and message ids restart in every process: skip those the
            # journal already holds, so the session's next turn gets fresh ones.
            ids.reserve(_record_ids(loaded.records))
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
        tools, policy = self._tools_for(session_id, cwd, extra_roots, log_, records)
        handle = None
        model = self._session_model(records)
        if model is not None:
            from acp_server.agent.agent import spawn_agent
            from acp_server.agent.loop import AgentConfig, random_ids
            from acp_server.agent.seams import Seams

            ids = connection.options.ids
            from acp_server.agent.subagents import session_task_tool

            tools.append(
                session_task_tool(self.store, cwd, extra_roots, log_, model, tools, policy, ids)
            )
            handle = spawn_agent(
                log_,
                AgentConfig(
                    model=model,
                    tools=tools,
                    max_result_bytes=connection.options.tool_budget.max_result_bytes,
                ),
                connection.task_group,
                seams=Seams(approval=[policy.approve]),
                ids=ids if ids is not None else random_ids,
                durability_flush=journal.flush,
            )
            handle.agent.subscribe(SessionUpdates(connection.peer, session_id))
            self._install_hooks(handle.agent, session_id, cwd)
        servers = [s for s in mcp_servers if isinstance(s, McpServer)]
        if servers:
            from acp_server.mcp import McpServers

            agent = handle.agent if handle is not None else None

            def add_tools(new: list[Tool]) -> None:
                tools.extend(new)
                if agent is not None:
                    agent.add_tools(new)

            mcp = McpServers(servers, cwd, add_tools, connection.options.processes)
            self._mcp[session_id] = mcp
            mcp.start(connection.task_group)
        session = AcpSession(
            session_id,
            cwd,
            handle,
            log_,
            journal,
            policy,
            extra_roots,
            list(mcp_servers),
            model=model,
        )
        connection.sessions.add(session)
        return session

    def _session_model(self, records: Sequence[rec.Record]) -> SwitchableModel | None:
        """The session's model: the server's, or the one it last switched to (if offered)."""
        options = self._connection.options
        if options.model is None:
            return None
        model = SwitchableModel(
            options.model_spec or options.model.name, options.model, self._connection.provider_for
        )
        chosen = [r.model for r in records if isinstance(r, rec.ModelChange)]
        if chosen and chosen[-1] in options.offered_models and chosen[-1] != model.spec:
            try:
                model.switch(chosen[-1])
            except (ModelConfigError, ValueError) as exc:
                log.warning("cannot restore model %s: %s", chosen[-1], exc)
        return model

    def _tools_for(
        self,
        session_id: str,
        cwd: str,
        extra_roots: list[str],
        session_log: SessionLog,
        records: Sequence[rec.Record],
    ) -> tuple[list[Tool], PermissionPolicy]:
        """The session's tools, reaching files and commands through the client when it offers
        them (unsaved buffers, live terminals), else locally; and its permission policy with the
        mode and "always" answers restored from its records."""
        peer = self._connection.peer
        caps = self._connection.client_capabilities
        sandbox = Sandbox(cwd, extra_roots)
        local = LocalFiles()
        client = ClientFiles(peer, session_id)
        files = SplitFiles(
            client if caps.fs.read_text_file else local,
            client if caps.fs.write_text_file else local,
        )
        commands: CommandRunner = (
            ClientTerminals(peer, session_id)
            if caps.terminal
            else LocalCommands(registry=self._connection.options.processes)
        )
        tools = builtin_tools(sandbox, files, commands, self._connection.options.tool_budget)
        mode: Mode = self._connection.options.mode
        always: dict[ToolKind, bool] = {}
        for record in records:
            if isinstance(record, rec.ModeChange) and record.mode in MODE_IDS:
                mode = record.mode  # type: ignore[assignment]
            elif isinstance(record, rec.PermissionRule):
                always[record.tool_kind] = record.decision == "allow"  # type: ignore[index]

        def remember(kind: ToolKind, allow: bool) -> None:
            session_log.append(
                rec.PermissionRule(
                    tool_kind=kind, decision="allow" if allow else "reject", at=rec.utc_now()
                )
            )

        policy = PermissionPolicy(
            sandbox,
            _ToolsByName(tools),  # live: MCP tools join the list once their servers connect
            AcpPermissionAsker(peer, session_id),
            mode=mode,
            always=always,
            remember=remember,
        )
        return tools, policy

    def _install_hooks(self, agent: Agent, session_id: str, cwd: str) -> None:
        """Add the user's and the workspace's hooks to the session's seams. Workspace hooks ask
        first (a permission request about a synthetic `execute` tool call); the message that
        says which hook blocked a prompt is an agent message chunk."""
        import anyio

        from acp_server.agent.loop import random_ids
        from acp_server.hooks import SessionHooks, load_hooks
        from protocol.content import TextContent
        from protocol.session_update import AgentMessageChunk
        from protocol.tool_call import ContentToolCallContent, ToolCall, ToolCallUpdate

        hooks = load_hooks(cwd)
        if not hooks:
            return
        peer = self._connection.peer
        ids = self._connection.options.ids or random_ids
        updates = SessionUpdates(peer, session_id)
        asker = AcpPermissionAsker(peer, session_id)

        async def consent(path: str, signal: TurnSignal) -> bool:
            call_id = ids("hooks")
            title = f"Run hooks from {path}"
            commands = "\n".join(
                f"{h.event}: {h.command}" for h in hooks if h.source == "workspace"
            )
            await updates.send(
                ToolCall(
                    tool_call_id=call_id,
                    title=title,
                    kind="execute",
                    status="pending",
                    content=[ContentToolCallContent(content=TextContent(text=commands))],
                    raw_input={"path": path},
                )
            )
            allowed = False
            try:
                answer = await asker.ask(call_id, title, "the workspace carries hooks", signal)
                allowed = answer in ("allow_once", "allow_always")
            finally:
                with anyio.CancelScope(shield=True):
                    await updates.send(
                        ToolCallUpdate(
                            tool_call_id=call_id, status="completed" if allowed else "failed"
                        )
                    )
            return allowed

        async def notify(text: str) -> None:
            await updates.send(
                AgentMessageChunk(content=TextContent(text=text), message_id=ids("msg"))
            )

        SessionHooks(
            hooks,
            session_id=session_id,
            cwd=cwd,
            consent=consent,
            notify=notify,
            processes=self._connection.options.processes,
        ).install(agent)


class _ToolsByName(Mapping[str, Tool]):
    """A live by-name view of a tools list (which grows when MCP servers connect)."""

    def __init__(self, tools: list[Tool]) -> None:
        self._tools = tools

    def __getitem__(self, name: str) -> Tool:
        for tool in self._tools:
            if tool.name == name:
                return tool
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter([tool.name for tool in self._tools])

    def __len__(self) -> int:
        return len(self._tools)


class SplitFiles:
    """Reads from one `FileAccess`, writes through another (the client may offer only one)."""

    def __init__(self, reader: FileAccess, writer: FileAccess) -> None:
        self._reader = reader
        self._writer = writer

    async def read_text(self, path: str, signal: TurnSignal) -> str:
        return await self._reader.read_text(path, signal)

    async def read_window(
        self, path: str, start: int, max_lines: int, max_bytes: int, signal: TurnSignal
    ) -> TextWindow:
        return await self._reader.read_window(path, start, max_lines, max_bytes, signal)

    async def write_text(self, path: str, content: str, signal: TurnSignal) -> None:
        await self._writer.write_text(path, content, signal)


def _record_ids(records: Sequence[rec.Record]) -> Iterator[str]:
    """The turn and message ids that records hold."""
    for record in records:
        for name in ("turn_id", "message_id"):
            value = getattr(record, name, None)
            if isinstance(value, str):
                yield value


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
