"""The v2 session methods whose answer or order differ from v1's: `session/resume` (with
`replayFrom`), `session/close`, `session/fork`, `session/set_config_option`, and the per-item
cancels. Each does the shared work through v1's groups (acp/methods/lifecycle.py,
config_options.py) and answers in v2's shapes.

`session/resume` with `replayFrom: {"type": "start"}`: the whole retained history as v2 updates,
then one `replay_complete`, then the current `state_update`, then the answer; without a cursor:
the state, then the answer. Any other cursor is refused (-32602), never replaced by another; a
session whose turn runs in this process is not replayed (-32600: its live updates would
interleave with its history, as a rewind is refused then). The cwd must be the session's
(-32602).

`session/close`: the running turn is cancelled and its idle `cancelled` sent before the answer
(held prompts answer -32800); after the answer nothing more is sent for the session. An unknown
session closes successfully, as the spec asks.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from acp_protocol import errors
from acp_protocol.session import (
    CloseSessionRequest,
    CloseSessionResponse,
    SetSessionConfigOptionRequest,
)
from acp_protocol.v2 import session_update as su
from acp_protocol.v2.config import SessionConfigOption
from acp_protocol.v2.methods import V2
from acp_protocol.v2.session import (
    CancelTerminalRequest,
    CancelTerminalResponse,
    CancelToolCallRequest,
    CancelToolCallResponse,
    ReplayFrom,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
)
from acp_protocol.v2.unstable import (
    ForkSessionRequest,
    ForkSessionResponse,
    ResumeSessionWithPrompt,
)
from acp_server.rpc.dispatch import Route
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest

from ..context import BridgeContext
from ..errors import invalid_params
from ..methods.config_options import SessionConfig
from ..methods.lifecycle import SessionMethods
from ..sessions import AcpSession
from ..wiring import SessionWiring
from . import params, shapes
from .presenter import V2Presenter
from .prompts import v2_view
from .replay import replay_v2

__all__ = ["V2Sessions"]

REPLAY_FROM_START = "start"
"""The one replay cursor this agent serves: the whole retained history."""


class V2Sessions:
    """v2's resume, close, fork, config option and per-item cancels of one connection."""

    def __init__(
        self,
        context: BridgeContext,
        wiring: SessionWiring,
        sessions: SessionMethods,
        config: SessionConfig,
    ) -> None:
        self._context = context
        self._wiring = wiring
        self._sessions = sessions
        self._config = config

    def routes(self) -> list[Route[Any]]:
        """This group's methods."""
        return [
            Route(V2.session_resume, self.resume),
            Route(V2.session_close, self.close),
            Route(V2.session_fork, self.fork),
            Route(V2.session_set_config_option, self.set_config_option),
            Route(V2.tool_call_cancel, self.cancel_tool_call),
            Route(V2.terminal_cancel, self.cancel_terminal),
        ]

    @property
    def _presenter(self) -> V2Presenter:
        presenter = self._context.presenter
        assert isinstance(presenter, V2Presenter)
        return presenter

    def _options(self, session: AcpSession) -> list[SessionConfigOption]:
        return shapes.config_options(self._config.options_for(session))

    async def resume(
        self, request: IncomingRequest, resume: ResumeSessionWithPrompt
    ) -> ResumeSessionResponse:
        cursor = resume.replay_from
        replay = isinstance(cursor, ReplayFrom)
        if isinstance(cursor, ReplayFrom) and cursor.type != REPLAY_FROM_START:
            raise invalid_params(
                f"replayFrom type {cursor.type!r} is not supported; this agent replays from "
                f"{{'type': '{REPLAY_FROM_START}'}} or not at all"
            )
        active = self._context.sessions.get(resume.session_id)
        agent = active.agent if active is not None else None
        if replay and agent is not None and agent.status != "idle":
            raise RpcError(
                errors.INVALID_REQUEST,
                "Invalid request",
                "a turn of this session is running in this agent: resume it with replay "
                "once the turn has ended (or without replayFrom now)",
            )
        session = await self._sessions.reopen(params.resume_params(resume), same_cwd=True)
        self._presenter.reopened(session.id)
        view = v2_view(session)
        if replay:
            for update in replay_v2(session.log.records, session.cwd):
                await view.send(update)
            await view.send(su.ReplayComplete())
        await view.background.announce()
        await view.send(view.foreground.snapshot())
        self._sessions.tell_after(request, session)
        return ResumeSessionResponse(config_options=self._options(session))

    async def close(
        self, request: IncomingRequest, close: CloseSessionRequest
    ) -> CloseSessionResponse:
        session = self._context.sessions.get(close.session_id)
        if session is not None:
            items = session.toolbox.background
            stops_background = items is not None and bool(items.running)
            # Cancelled first: the turn's idle `cancelled` is sent before this returns; then
            # each background command's exit, and the snapshot without it.
            await self._wiring.release(session)
            if stops_background:
                await v2_view(session).foreground.closed_background()
        self._presenter.closed(close.session_id)
        return CloseSessionResponse()

    async def fork(self, request: IncomingRequest, fork: ForkSessionRequest) -> ForkSessionResponse:
        forked = await self._sessions.fork_session(request, params.fork_params(fork))
        session = self._context.session(forked.session_id)
        return ForkSessionResponse(
            session_id=forked.session_id, config_options=self._options(session)
        )

    async def set_config_option(
        self, request: IncomingRequest, change: SetSessionConfigOptionRequest
    ) -> SetSessionConfigOptionResponse:
        # Every option here is a select: set by value id (`type: "id"`; a request without a
        # `type` is read as one, as the migration page's method table shows it).
        if change.type is not UNSET and change.type != "id":
            raise invalid_params(
                f"{change.config_id} is a select option: set it with type 'id', not {change.type!r}"
            )
        changed = await self._config.set_config_option(request, change)
        return SetSessionConfigOptionResponse(
            config_options=shapes.config_options(changed.config_options)
        )

    async def cancel_tool_call(
        self, request: IncomingRequest, cancel: CancelToolCallRequest
    ) -> CancelToolCallResponse:
        # No tool call advertises `capabilities.cancel`: a background command is listed and
        # cancelled as its terminal, and a foreground call stops with its turn.
        raise RpcError(
            errors.INVALID_PARAMS,
            "The tool call is unknown or cannot be cancelled alone; session/cancel stops the "
            "turn's work, terminal/cancel a background command",
            {"toolCallId": cancel.tool_call_id},
        )

    async def cancel_terminal(
        self, request: IncomingRequest, cancel: CancelTerminalRequest
    ) -> CancelTerminalResponse:
        """Stop one background command (its terminal advertises `capabilities.cancel`): the
        answer says it is accepted; its terminal's exit status confirms the stop, and the
        others run on. A foreground command's terminal stops with its turn."""
        session = self._context.sessions.get(cancel.session_id)
        items = session.toolbox.background if session is not None else None
        item = items.get(cancel.terminal_id) if items is not None else None
        if item is None or not item.running:
            raise RpcError(
                errors.INVALID_PARAMS,
                "The terminal is unknown, has exited or cannot be cancelled alone; "
                "session/cancel stops the turn's work",
                {"terminalId": cancel.terminal_id},
            )
        item.request_stop()
        return CancelTerminalResponse()
