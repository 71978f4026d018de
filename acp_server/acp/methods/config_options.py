"""Permission modes on the wire: ACP `modes` and the `mode` config option, kept in sync,
`session/set_mode`, `session/set_config_option`, and the `/mode` and `/model` slash commands
(what a session response says about them is in acp/mode_options.py)."""

from __future__ import annotations

from typing import Any

from acp_protocol.methods import V1
from acp_protocol.session import (
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from acp_protocol.session_config import SessionConfigOption, SessionModeState
from acp_server.models.base import ModelConfigError
from acp_server.rpc.dispatch import Route
from acp_server.rpc.peer import IncomingRequest
from acp_server.tools.toolbox import ModeInfo, ModeRefused, check_mode

from ..context import BridgeContext
from ..errors import invalid_params
from ..mode_options import (
    MODE_OPTION_ID,
    MODEL_OPTION_ID,
    config_options,
    mode_state,
    offered_modes,
)
from ..sessions import AcpSession


class SessionConfig:
    """`session/set_mode` and `session/set_config_option` of one connection; the `/mode`
    command and the session responses use it too."""

    def __init__(self, context: BridgeContext) -> None:
        self._context = context

    def routes(self) -> list[Route[Any]]:
        """This group's methods."""
        return [
            Route(V1.session_set_mode, self.set_mode),
            Route(V1.session_set_config_option, self.set_config_option),
        ]

    async def set_mode(
        self, request: IncomingRequest, change: SetSessionModeRequest
    ) -> SetSessionModeResponse:
        await self.change_mode(self._context.session(change.session_id), change.mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, request: IncomingRequest, change: SetSessionConfigOptionRequest
    ) -> SetSessionConfigOptionResponse:
        session = self._context.session(change.session_id)
        if change.config_id not in (MODE_OPTION_ID, MODEL_OPTION_ID) or (
            change.config_id == MODEL_OPTION_ID and session.model is None
        ):
            raise invalid_params(f"unknown config option {change.config_id!r}")
        if not isinstance(change.value, str):
            raise invalid_params(f"{change.config_id} takes a string value")
        if change.config_id == MODE_OPTION_ID:
            await self.change_mode(session, change.value)
        else:
            self.change_model(session, change.value)
        return SetSessionConfigOptionResponse(config_options=self.options_for(session))

    def options_for(self, session: AcpSession) -> list[SessionConfigOption]:
        """The session's config options as they stand."""
        return config_options(
            session.policy.mode,
            session.model.spec if session.model is not None else None,
            self._context.options.offered_models,
            self.modes(),
        )

    def modes(self) -> tuple[ModeInfo, ...]:
        """The modes offered on this machine."""
        return offered_modes(self._context.bwrap is not None)

    def mode_state(self, session: AcpSession) -> SessionModeState:
        """The session's `modes`, as a session response gives them."""
        return mode_state(session.policy.mode, self.modes())

    def describe_mode(self, session: AcpSession) -> str:
        """What `/mode` alone answers: the session's mode and the modes it may switch to."""
        lines = [f"The mode is {session.policy.mode}. Switch with /mode NAME:"]
        lines += [f"- {m.id}: {m.description}" for m in self.modes()]
        return "\n".join(lines)

    def describe_model(self, session: AcpSession) -> str:
        """What `/model` alone answers: the session's model and the offered ones."""
        current = session.model.spec if session.model is not None else "not configured"
        lines = [f"The model is {current}. Switch with /model NAME:"]
        lines += [f"- {spec}" for spec in self._context.options.offered_models]
        return "\n".join(lines)

    def change_model(self, session: AcpSession, spec: str) -> None:
        """Switch the session's model from its next request on, and remember it."""
        offered = self._context.options.offered_models
        if session.model is None or spec not in offered:
            raise invalid_params(f"model {spec!r} is not offered; offered: {', '.join(offered)}")
        try:
            session.model.switch(spec)
        except (ModelConfigError, ValueError) as exc:
            raise invalid_params(str(exc)) from None
        session.log.recorder.model_changed(spec)

    async def change_mode(self, session: AcpSession, mode: str) -> None:
        """Switch the permission mode, remember it, and tell the client both ways."""
        try:
            checked = check_mode(mode, sandbox_missing=self._context.sandbox_missing)
        except ModeRefused as exc:
            raise invalid_params(str(exc)) from None
        session.policy.mode = checked
        session.log.recorder.mode_changed(checked)
        await self.announce_mode(session)

    async def announce_mode(self, session: AcpSession) -> None:
        """Tell the client the session's current mode (v1: as a mode update and as its config
        option; v2: as its config option)."""
        await self._context.presenter.mode_changed(
            session.id, session.policy.mode, self.options_for(session)
        )
