"""Wiring a session from its parts: journal, log, toolbox, permission policy, model, agent,
hooks and MCP servers; and taking them apart again when the session ends.

This is the bridge's composition root for one session. Every session is journaled under the
data directory from the moment it exists: each record is written as it is appended, and the
journal is fsynced at every turn end (before the prompt is answered) and on close. See
docs/rfc/implemented/architecture/2026-11-30-session-journal.md.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import UNSET

from acp_protocol.mcp import McpServer
from acp_server.agent import (
    AgentConfig,
    ClientPrompt,
    ProjectInstructions,
    Roots,
    Seams,
    background_status,
    offered_by,
    session_task_tool,
    spawn_agent,
    user_instructions_file,
)
from acp_server.cancellation import UserCancel
from acp_server.models.base import ModelConfigError
from acp_server.models.switchable import SwitchableModel
from acp_server.session import records as rec
from acp_server.session.journal import Journal, JournalStore
from acp_server.session.journal_format import JournalError
from acp_server.session.log import SessionLog
from acp_server.session.state import SessionState
from acp_server.tools.base import ToolKind
from acp_server.tools.permissions import MODE_IDS, Mode, PermissionPolicy, Rules, workspace_key
from acp_server.tools.toolbox import Machine, Toolbox, Transports, user_commands_dir

from .child_sessions import ChildSessions, shows_subagents
from .client_requests import ClientFiles, ClientTerminals, asks_forms
from .context import BridgeContext
from .hook_consent import install_hooks
from .mode_options import starting_mode
from .presenter import SessionView
from .sessions import AcpSession

if TYPE_CHECKING:
    from acp_server.extensions.mcp import McpServerConfig, McpServers
    from acp_server.process.background import BackgroundItem

log = logging.getLogger(__name__)


class SessionWiring:
    """Builds each session of one connection from its parts and takes it apart again."""

    def __init__(self, context: BridgeContext, store: JournalStore) -> None:
        self._context = context
        self.store = store
        self._instructions = context.options.instructions
        self._mcp: dict[str, McpServers] = {}

    def start(
        self,
        session_id: str,
        cwd: str,
        extra_roots: list[str],
        mcp_servers: list[object],
        records: list[rec.Record],
        journal: Journal,
    ) -> AcpSession:
        """Wire a session (new, or reopened from its journal's records) and register it."""
        context = self._context
        log_ = SessionLog(session_id, records)
        log_.on_append(journal.append)
        state = SessionState.of(records)
        # Child sessions are a v1 opt-in (a v2 client is never heard asking for them).
        children = ChildSessions(context) if shows_subagents(context.client_capabilities) else None
        links = children.links_of(session_id) if children is not None else None
        view = context.presenter.session_view(session_id, cwd, records, links)
        toolbox, policy, mode_fallback = self._toolbox_for(
            session_id, cwd, extra_roots, log_, state, view
        )
        follow_background(toolbox, log_, records)
        if toolbox.background is not None:
            view.show_background(toolbox.background)
        handle = None
        client_prompt = ClientPrompt()
        if state.system_prompt is not None:
            client_prompt.set(state.system_prompt.mode, state.system_prompt.text)
        model, model_fallback = self._session_model(state)
        if model is not None:
            ids = context.options.ids
            limits = context.options.turn_limits
            toolbox.add(
                [
                    session_task_tool(
                        self.store,
                        cwd,
                        extra_roots,
                        log_,
                        model,
                        toolbox,
                        policy,
                        ids,
                        limits.context_threshold,
                        children,
                        limits.subagents,
                    )
                ]
            )
            handle = spawn_agent(
                log_,
                AgentConfig(
                    model=model,
                    tools=toolbox.tools,
                    max_result_bytes=context.options.tools.budget.max_result_bytes,
                    max_steps=limits.max_steps,
                    context_threshold=limits.context_threshold,
                    max_repeats=limits.max_repeats,
                    max_failed=limits.max_failed,
                    test_command=toolbox.test_command,
                    max_test_rounds=context.options.tools.tests.max_rounds,
                    cwd=cwd,
                ),
                context.task_group,
                seams=self._seams(cwd, extra_roots, policy, client_prompt, toolbox),
                ids=context.ids,
                durability_flush=journal.flush,
            )
            toolbox.on_add(handle.agent.add_tools)  # MCP tools, a late `skill`
            handle.agent.subscribe(view)
            install_hooks(context, handle.agent, session_id, cwd, view)
        servers = [mcp_config(s) for s in mcp_servers if isinstance(s, McpServer)]
        if servers:
            # Imported here, not at the top: it costs ~16 ms (11 modules) that the first session
            # of a client without MCP servers would otherwise wait for.
            from acp_server.extensions.mcp import McpServers

            mcp = McpServers(servers, cwd, toolbox.add, context.processes)
            self._mcp[session_id] = mcp
            mcp.start(context.task_group)
        session = AcpSession(
            session_id,
            cwd,
            handle,
            log_,
            journal,
            toolbox,
            policy,
            extra_roots,
            list(mcp_servers),
            model=model,
            model_fallback=model_fallback,
            mode_fallback=mode_fallback,
            client_prompt=client_prompt,
            view=view,
        )
        context.sessions.add(session)
        return session

    async def release(self, session: AcpSession, *, cancel_first: bool = True) -> None:
        """Stop a session as `session/cancel` would, dispose its agent, close its journal."""
        agent = session.agent
        if agent is not None and cancel_first:
            agent.cancel(UserCancel())
        if session.rewind is not None:
            # Before the journal closes: the rewind checks its signal right before it appends
            # its record, so it appends nothing and puts the files back (acp/rewind.py).
            session.rewind.abort(UserCancel())
        if session.handle is not None:
            await session.handle.dispose()
        if session.toolbox.background is not None:
            # Before the journal closes: each item's end is journaled.
            await session.toolbox.background.aclose()
        mcp = self._mcp.pop(session.id, None)
        if mcp is not None:
            await mcp.aclose()
        if session.journal is not None:
            try:
                session.journal.close()
            except JournalError as exc:
                log.error("closing the journal of %s failed: %s", session.id, exc)
        self._context.sessions.remove(session.id)

    async def before_prompt(self, session: AcpSession) -> None:
        """Wait (bounded) for the session's MCP servers; report each failed one once."""
        mcp = self._mcp.get(session.id)
        if mcp is None:
            return
        await mcp.ready()
        presenter = self._context.presenter
        unshown = []
        for failure in mcp.take_failures():
            title, _, why = failure.partition(": ")
            if not await presenter.notice(session.id, "warning", title, why or None):
                unshown.append(failure)
        if unshown:  # a client without notices sees them in the conversation
            text = "\n".join(unshown) + "\n"
            await presenter.say(session.id, text, self._context.ids("msg"))

    def _seams(
        self,
        cwd: str,
        extra_roots: list[str],
        policy: PermissionPolicy,
        client_prompt: ClientPrompt,
        toolbox: Toolbox,
    ) -> Seams:
        """The session's listeners: the permission policy; the client's system prompt, then the
        environment (with the project's test command) and project instructions in the system
        prompt (read again at each turn's first step); the status of the background commands
        on each request."""
        instructions = ProjectInstructions(
            Roots(Path(cwd), [Path(root) for root in extra_roots]),
            self._instructions,
            toolbox.test_command,
        )
        return Seams(
            approval=[policy.approve],
            pre_step=[instructions.refresh],
            system_prompt=[client_prompt.assemble, instructions.assemble],
            request_config=[offered_by(policy, can_ask=True)]
            + ([background_status(toolbox.background)] if toolbox.background is not None else []),
        )

    def _session_model(self, state: SessionState) -> tuple[SwitchableModel | None, str | None]:
        """The session's model: the server's, or the one it last switched to (if offered);
        and why it fell back to the server's, if it did."""
        options = self._context.options
        if options.model is None:
            return None, None
        model = SwitchableModel(
            options.model_spec or options.model.name, options.model, self._context.provider_for
        )
        chosen = state.model
        if chosen is None or chosen == model.spec:
            return model, None
        if chosen not in options.offered_models:
            return model, f"The session used {chosen}, which is no longer offered."
        try:
            model.switch(chosen)
        except (ModelConfigError, ValueError) as exc:
            log.warning("cannot restore model %s: %s", chosen, exc)
            return model, f"The session used {chosen}, which cannot be loaded: {exc}"
        return model, None

    def _toolbox_for(
        self,
        session_id: str,
        cwd: str,
        extra_roots: list[str],
        session_log: SessionLog,
        state: SessionState,
        view: SessionView,
    ) -> tuple[Toolbox, PermissionPolicy, str | None]:
        """The session's toolbox, reaching files and commands through the client when it
        offers them (unsaved buffers, live terminals), else locally; its permission policy with
        the mode and "always" answers restored from its records; and why the mode fell back to
        `default`, if it did (sandboxed mode where the command sandbox cannot run, or a mode
        this process refuses, such as bypass as root outside a sandbox)."""
        context = self._context
        peer, caps = context.peer, context.client_capabilities
        client = ClientFiles(peer, session_id)
        toolbox = Toolbox.for_session(
            cwd,
            extra_roots,
            context.options.tools,
            Transports(
                read=client if caps.fs.read_text_file else None,
                write=client if caps.fs.write_text_file else None,
                commands=ClientTerminals(peer, session_id) if caps.terminal else None,
                forms=view.forms if asks_forms(caps) else None,
            ),
            Machine(context.options.data_dir, context.processes, context.bwrap, context.task_group),
            user_dir=user_commands_dir(user_instructions_file()),
        )
        mode: Mode = context.options.mode
        recorded = state.mode(MODE_IDS)
        if recorded is not None:
            mode = recorded  # type: ignore[assignment]
        rules = Rules()
        here = workspace_key(cwd, extra_roots)
        for rule in state.rules_in(here):
            kind: ToolKind = rule.tool_kind  # type: ignore[assignment]
            rules.add(kind, rule.scope or kind, rule.decision == "allow")
        mode, fallback = starting_mode(mode, context.bwrap, context.sandbox_missing)

        def remember(kind: ToolKind, allow: bool, scope: str) -> None:
            session_log.recorder.permission_rule(kind, allow=allow, scope=scope, workspace=here)

        policy = toolbox.policy(
            view.permissions,
            mode=mode,
            rules=rules,
            remember=remember,
        )
        return toolbox, policy, fallback


def follow_background(toolbox: Toolbox, session_log: SessionLog, records: list[rec.Record]) -> None:
    """Journal each start and end of the session's background commands; restore those the
    records say ended with an earlier agent process since the last turn began (the model was
    not told yet), and keep every earlier name from being handed out again."""
    items = toolbox.background
    if items is None:
        return
    recorder = session_log.recorder

    async def started(item: BackgroundItem) -> None:
        recorder.background_started(item.name, item.command, item.call_id)

    async def ended(item: BackgroundItem) -> None:
        if item.end is not None:
            end = item.end
            recorder.background_ended(item.name, end.how, end.exit_code, end.posix_signal)

    items.on_start(started)
    items.on_end(ended)
    starts: dict[str, rec.BackgroundStart] = {}
    unseen: list[str] = []
    for record in records:
        if isinstance(record, rec.BackgroundStart):
            starts[record.item] = record
            items.reserve(record.item)
        elif isinstance(record, rec.BackgroundEnd) and record.how == "unknown":
            unseen.append(record.item)
        elif isinstance(record, rec.TurnStart):
            unseen.clear()
    for name in unseen:
        start = starts.get(name)
        if start is not None:
            items.restore(name, start.command, start.call_id)


def mcp_config(server: McpServer) -> McpServerConfig:
    """An `mcpServers` entry of `session/new`, `load` or `resume` as the MCP extension takes it
    (the wire type stops here)."""
    from acp_server.extensions.mcp import McpServerConfig

    return McpServerConfig(
        name=server.name,
        transport="stdio" if server.is_stdio else str(server.type),
        command=server.command if server.command is not UNSET else "",
        args=tuple(server.args) if server.args is not UNSET else (),
        env={e.name: e.value for e in server.env} if server.env else {},
        url=server.url if server.url is not UNSET else "",
        headers={h.name: h.value for h in server.headers} if server.headers else {},
    )
