"""The requests a v2 session sends its client: permission (with a prompt `title` and a
`subject`) and form questions, each bracketed by the foreground state (`requires_action` while
it waits, `running` once answered unless the turn was cancelled meanwhile).

A command is asked about whole as a `command` subject (the command text with its control
characters shown, `printable`, and the absolute cwd it runs in); another tool call as a
`tool_call` subject carrying only its id and input, never a title (the client applies it to
the call like a `tool_call_update`, and the prompt's copy must not retitle the call). What the
answer means is v1's: the safe option first, an unknown option or a malformed answer is a
rejection, no answer is `cancelled`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
from msgspec import UNSET

from acp_protocol import methods as m
from acp_protocol.client import RequestPermissionResponse, SelectedPermissionOutcome
from acp_protocol.v2.client import (
    CommandPermissionSubject,
    RequestPermissionRequest,
    RequestPermissionSubject,
    ToolCallPermissionSubject,
)
from acp_protocol.v2.tool_call import ToolCallUpdateFields
from acp_server.cancellation import TurnSignal
from acp_server.printable import one_line, printable
from acp_server.rpc.errors import MalformedAnswer, PeerClosed, RemoteError
from acp_server.rpc.peer import Peer
from acp_server.tools.permissions import Answer
from acp_server.tools.toolbox import FormAnswer

from ..client_requests import ANSWERS, PERMISSION_OPTIONS, AcpFormAsker, ask_within
from .foreground import Foreground

log = logging.getLogger(__name__)

__all__ = ["V2FormAsker", "V2PermissionAsker", "command_of"]


def command_of(arguments: Mapping[str, Any] | None) -> str | None:
    """The command a call runs, when its input names one (`bash`'s `command`)."""
    command = arguments.get("command") if arguments is not None else None
    return command if isinstance(command, str) else None


class V2PermissionAsker:
    """Asks through a v2 `session/request_permission` about an announced tool call; `inputs`
    are the inputs of the calls the session announced (the view keeps them)."""

    def __init__(
        self,
        peer: Peer,
        session_id: str,
        cwd: str,
        inputs: Mapping[str, Mapping[str, Any]],
        foreground: Foreground,
    ) -> None:
        self._peer = peer
        self._session_id = session_id
        self._cwd = cwd
        self._inputs = inputs
        self._foreground = foreground

    def _subject(self, call_id: str) -> RequestPermissionSubject:
        arguments = self._inputs.get(call_id)
        command = command_of(arguments)
        if command is not None:
            return CommandPermissionSubject(
                command=printable(command), cwd=self._cwd, tool_call_id=call_id
            )
        return ToolCallPermissionSubject(
            tool_call=ToolCallUpdateFields(
                tool_call_id=call_id,
                raw_input=dict(arguments) if arguments is not None else UNSET,
            )
        )

    async def ask(self, call_id: str, title: str, reason: str, signal: TurnSignal) -> Answer:
        request = RequestPermissionRequest(
            session_id=self._session_id,
            title=f"Allow: {one_line(title)}?",
            description=reason or UNSET,
            subject=self._subject(call_id),
            options=PERMISSION_OPTIONS,
        )
        await self._foreground.waiting()
        try:
            response = await ask_within(
                self._peer, m.SESSION_REQUEST_PERMISSION, request, RequestPermissionResponse, signal
            )
        except (PeerClosed, RemoteError) as exc:
            log.info("permission request for %s got no answer: %s", call_id, exc)
            return "cancelled"
        except MalformedAnswer as exc:
            # Not a yes: a client that cannot say what it chose has not allowed anything.
            log.warning("permission request for %s: %s; counted as a rejection", call_id, exc)
            return "reject_once"
        finally:
            with anyio.CancelScope(shield=True):
                await self._foreground.answered(resumed=not signal.aborted)
        outcome = response.outcome
        if isinstance(outcome, SelectedPermissionOutcome):
            return ANSWERS.get(outcome.option_id, "reject_once")
        return "cancelled"


class V2FormAsker:
    """v1's form asker (the request kept its shape), bracketed by the foreground state; the
    form's `type` is always sent (v2 requires it; a form without one is an object form)."""

    def __init__(self, inner: AcpFormAsker, foreground: Foreground) -> None:
        self._inner = inner
        self._foreground = foreground

    async def ask(
        self, message: str, form: Mapping[str, Any], call_id: str, signal: TurnSignal
    ) -> FormAnswer:
        await self._foreground.waiting()
        try:
            typed = form if "type" in form else {**form, "type": "object"}
            return await self._inner.ask(message, typed, call_id, signal)
        finally:
            with anyio.CancelScope(shield=True):
                await self._foreground.answered(resumed=not signal.aborted)
