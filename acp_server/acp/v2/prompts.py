"""`session/prompt` on a v2 connection: answered `{messageId}` once the prompt is inserted (its
user message recorded), not when it arrives and not when its turn ends.

The steps are v1's (acp/methods/prompts.py: what the prompt is, running a local command, the
follow-up's agent and parts); what differs is the answer. A prompt for the model is queued
like v1's; its answer waits for its insertion (`PromptTicket.inserted`), so prompts sent while
a turn runs are held in order and answered one by one as each is inserted. The turn's updates
and its end (the idle `state_update`) come from the session's view, not from here. A prompt
that never gets inserted is answered with an error: cancelled or withdrawn while held, -32800;
refused by a `prompt_submit` hook, -32602 (the spec's code for a prompt refused before
insertion, as an empty one is; the hook's reason is said); failed before insertion, -32603.
`$/cancel_request` withdraws a held prompt, and is ignored once it is inserted (answered).

A local command (`/mode`, `/model`, `/rewind`, an unreadable custom command) is a foreground
activity of its own: its prompt is echoed as a user message under a fresh id, then `running`,
the answer as the agent's message, and `idle` `end_turn` (no idle while a turn goes on beside
it). `/compact` is echoed the same way and answered once queued; its compaction's state comes
from the runtime like a turn's.
"""

from __future__ import annotations

from typing import Any

import anyio

from acp_protocol import errors
from acp_protocol.content import ContentBlock
from acp_protocol.session import PromptRequest
from acp_protocol.v2 import session_update as su
from acp_protocol.v2.methods import V2
from acp_protocol.v2.session import PromptResponse
from acp_server.agent import Blocked, PromptTicket
from acp_server.rpc.dispatch import Route
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest
from acp_server.session import records as rec

from ..context import BridgeContext
from ..errors import invalid_params
from ..methods.prompts import (
    Compaction,
    LocalCommand,
    PromptMethods,
    Unreadable,
    prompt_text,
    refuse_while_rewinding,
)
from ..rewind import RewindNotice
from ..sessions import AcpSession
from ..stop_reasons import stop_reason_for
from .view import V2SessionView

__all__ = ["V2Prompts", "v2_view"]


def v2_view(session: AcpSession) -> V2SessionView:
    """The session's v2 view (every session of a v2 connection has one)."""
    view = session.view
    assert isinstance(view, V2SessionView), f"session {session.id} is not shown on v2"
    return view


def not_inserted(ticket: PromptTicket) -> RpcError:
    """The error that answers a prompt whose ticket settled before it was inserted."""
    result = ticket.result
    if isinstance(result, Blocked):
        return RpcError(
            errors.INVALID_PARAMS,
            f"The prompt was refused by a prompt_submit hook: {result.reason}",
            {"refusal": result.reason},
        )
    if isinstance(result, rec.ErrorOutcome):
        try:
            stop_reason_for(result, ticket.error_detail)
        except RpcError as failed:
            return failed
    return RpcError(
        errors.REQUEST_CANCELLED,
        "Request cancelled",
        "the prompt was cancelled before it was inserted",
    )


class V2Prompts:
    """`session/prompt` of a v2 connection (`session/cancel` is v1's: the same runtime cancel;
    held prompts it drops answer -32800 here)."""

    def __init__(self, context: BridgeContext, prompts: PromptMethods) -> None:
        self._context = context
        self._prompts = prompts

    def routes(self) -> list[Route[Any]]:
        """This group's methods."""
        return [Route(V2.session_prompt, self.prompt)]

    async def prompt(self, request: IncomingRequest, prompt: PromptRequest) -> PromptResponse:
        session = self._context.session(prompt.session_id)
        if not prompt.prompt:
            raise invalid_params("the prompt is empty: send at least one content block")
        view = v2_view(session)
        step = await self._prompts.step(session, prompt)
        if isinstance(step, LocalCommand | Unreadable):
            return await self._local(request, session, view, prompt.prompt, step)
        if isinstance(step, Compaction):
            return await self._compact(request, session, view, prompt.prompt, step)
        agent, parts = await self._prompts.follow_up(session, step.prompt)
        ticket = agent.followup(parts)

        def withdraw() -> None:
            ticket.withdraw()  # held: answered -32800 below; inserted: already answered

        request.on_cancel_request = withdraw
        request.admit()  # only now: a cancel on the next line finds it queued
        await self._prompts.announce_title(session, prompt_text(prompt))
        message_id = await ticket.inserted()
        if message_id is None:
            raise not_inserted(ticket)
        return PromptResponse(message_id=message_id)

    async def _echo(
        self, session: AcpSession, view: V2SessionView, content: list[ContentBlock]
    ) -> str:
        """Show the prompt as a user message under a fresh id (a command's prompt is not
        journaled, so it is not replayed); the id."""
        message_id = self._context.ids("cmd")
        await view.send(su.UserMessage(message_id=message_id, content=content))
        return message_id

    async def _local(
        self,
        request: IncomingRequest,
        session: AcpSession,
        view: V2SessionView,
        content: list[ContentBlock],
        step: LocalCommand | Unreadable,
    ) -> PromptResponse:
        message_id = await self._echo(session, view, content)
        await view.foreground.begin()
        try:
            answer: str | RewindNotice
            if isinstance(step, Unreadable):
                request.admit()
                answer = step.message
            else:
                answer = await self._prompts.run_command(request, session, step)
            await self._prompts.say(session, answer)
        finally:
            with anyio.CancelScope(shield=True):
                await view.foreground.end("end_turn")
        return PromptResponse(message_id=message_id)

    async def _compact(
        self,
        request: IncomingRequest,
        session: AcpSession,
        view: V2SessionView,
        content: list[ContentBlock],
        step: Compaction,
    ) -> PromptResponse:
        agent = self._prompts.agent_of(session)
        refuse_while_rewinding(session)
        message_id = await self._echo(session, view, content)
        ticket = agent.compact(step.instructions or None)

        def withdraw() -> None:
            ticket.withdraw()

        request.on_cancel_request = withdraw
        request.admit()
        return PromptResponse(message_id=message_id)
