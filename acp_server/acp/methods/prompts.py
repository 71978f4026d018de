"""`session/prompt` and `session/cancel`: ACP turns onto the runtime and back."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from msgspec import UNSET, UnsetType

from acp_protocol import errors
from acp_protocol import usage as u
from acp_protocol.content import TextContent
from acp_protocol.methods import V1
from acp_protocol.session import CancelNotification, PromptRequest, PromptResponse
from acp_protocol.session_update import (
    UsageUpdate,
)
from acp_server.cancellation import UserCancel
from acp_server.models.base import Usage
from acp_server.rpc.dispatch import Route
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest
from acp_server.session import records as rec

from ..content import parts_from_prompt
from ..context import BridgeContext
from ..custom_commands import CommandUnreadable, custom_invocation, expand, refresh_commands
from ..errors import no_model
from ..mode_options import slash_command
from ..rewind import RewindMethods
from ..sessions import AcpSession
from ..stop_reasons import not_saved_error, stop_reason_for
from ..updates import SessionUpdates
from ..wiring import SessionWiring
from .config_options import SessionConfig
from .listing import derive_title

log = logging.getLogger(__name__)

KEEP_INBOX_META = "acp-server"
"""`_meta` namespace of our extensions; `{"acp-server": {"keepInbox": true}}` on session/cancel
aborts the running turn but keeps queued prompts."""


def wants_keep_inbox(meta: Any) -> bool:
    """True when a `session/cancel` carries our keepInbox flag."""
    if not isinstance(meta, dict):
        return False
    ours = meta.get(KEEP_INBOX_META)
    return isinstance(ours, dict) and ours.get("keepInbox") is True


def refuse_while_rewinding(session: AcpSession) -> None:
    """-32600 while a rewind of the session runs (acp/rewind.py): no turn may start then."""
    if session.rewind is not None:
        raise RpcError(
            errors.INVALID_REQUEST,
            "Invalid request",
            "a rewind of this session is running: prompt again once it has answered",
        )


def turn_usage(usage: Usage | None) -> u.Usage | UnsetType:
    """The prompt response's `usage`: the turn's tokens summed over its model requests (also
    for a cancelled or `max_tokens` turn: what the requests that reported any used). Left out
    when no request of the turn reported usage. `inputTokens` counts every input token, cached
    or not; `cachedReadTokens` / `cachedWriteTokens` are the parts of it the provider read from
    or wrote to its prompt cache (0 when the provider does not say)."""
    if usage is None:
        return UNSET
    return u.Usage(
        total_tokens=usage.input_tokens + usage.output_tokens,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_read_tokens=usage.cache_read_tokens,
        cached_write_tokens=usage.cache_write_tokens,
    )


@dataclass
class PromptMethods:
    """`session/prompt` and `session/cancel` of one connection."""

    context: BridgeContext
    wiring: SessionWiring
    config: SessionConfig
    rewinds: RewindMethods

    def routes(self) -> list[Route[Any]]:
        """This group's requests (`session/cancel` is routed by the connection, which must
        hear it before the runtime is loaded)."""
        return [Route(V1.session_prompt, self.prompt)]

    async def prompt(
        self, request: IncomingRequest, prompt: PromptRequest
    ) -> PromptResponse | u.PromptResponse:
        session = self.context.session(prompt.session_id)
        text = "\n".join(p.text for p in prompt.prompt if isinstance(p, TextContent))
        offered = self.context.options.offered_models
        single = len(prompt.prompt) == 1
        refuse_while_rewinding(session)
        scan = await refresh_commands(self.context, session, in_prompt=True)
        if any(c.skill for c in scan.commands.values()):
            session.toolbox.offer_skill()  # when a skill appeared since the session started
        command = slash_command(text, offered) if single else None
        if command is not None and command[0] == "rewind":
            await self._say(session, await self.rewinds.command(request, session, command[1]))
            return PromptResponse(stop_reason="end_turn")
        if command is not None and command[0] == "compact":
            return await self._compact(request, session, command[1])
        if command is not None:
            request.admit()
            return await self._run_command(session, *command)
        custom = custom_invocation(text, scan) if single else None
        if custom is not None:
            try:
                expanded = expand(scan, *custom)
            except CommandUnreadable as exc:
                request.admit()
                await self._say(session, f"The /{custom[0]} command was not run: {exc}")
                return PromptResponse(stop_reason="end_turn")
            prompt = PromptRequest(
                session_id=prompt.session_id, prompt=[TextContent(text=expanded)]
            )
        agent = session.agent
        if agent is None:
            raise no_model(self.context.options.config_path)
        await self.wiring.before_prompt(session)  # MCP servers still connecting
        parts = await session.toolbox.read_links(parts_from_prompt(prompt.prompt))
        refuse_while_rewinding(session)  # again: one may have started during the awaits
        ticket = agent.followup(parts)

        # `$/cancel_request` for this prompt stops it alone: dropped if queued, aborted (queue
        # kept) if running. Admitted only now, so a cancel on the next line finds it queued.
        def stop_this_prompt() -> None:
            if not ticket.withdraw() and ticket.state == "running":
                agent.cancel(UserCancel(), keep_inbox=True)

        request.on_cancel_request = stop_this_prompt
        request.admit()
        await self._announce_title(session, text)
        result = await ticket.wait()
        if ticket.not_saved is not None:
            raise not_saved_error(ticket.not_saved, self.context.options.data_dir)
        usage = agent.last_usage
        if usage is not None:
            log.info(
                "session %s: %d input tokens (%d read from cache), %d output tokens",
                session.id,
                usage.input_tokens,
                usage.cache_read_tokens,
                usage.output_tokens,
            )
            await SessionUpdates(self.context.peer, session.id).send(
                UsageUpdate(
                    used=usage.input_tokens + usage.output_tokens,
                    size=agent.context_budget.window,
                )
            )
        return u.PromptResponse(
            stop_reason=stop_reason_for(result, ticket.error_detail),
            usage=turn_usage(ticket.usage),
        )

    async def cancel(self, cancel: CancelNotification) -> None:
        child = self.context.children.get(cancel.session_id)
        if child is not None:
            # A running `task` child shown as a session: stop its current work only; the
            # parent's turn goes on with the child's cancelled result. The cause is the
            # user's (docs/rfc/implemented/architecture/2026-12-01-client-cancel-of-a-child.md).
            child.cancel(UserCancel())
            return
        session = self.context.sessions.get(cancel.session_id)
        if session is not None and session.rewind is not None:
            session.rewind.abort(UserCancel())  # a rewind runs only while no turn does
        if session is None or session.agent is None:
            return  # cancelling nothing is a no-op; a notification cannot be answered
        session.agent.cancel(UserCancel(), keep_inbox=wants_keep_inbox(cancel.meta))

    async def _compact(
        self, request: IncomingRequest, session: AcpSession, instructions: str
    ) -> PromptResponse:
        """`/compact [instructions]`: a compaction queued like a prompt and cancelled like one
        (`session/cancel`, or `$/cancel_request` for this request alone)."""
        agent = session.agent
        if agent is None:
            raise no_model(self.context.options.config_path)
        refuse_while_rewinding(session)
        ticket = agent.compact(instructions or None)

        def stop_this_prompt() -> None:
            if not ticket.withdraw() and ticket.state == "running":
                agent.cancel(UserCancel(), keep_inbox=True)

        request.on_cancel_request = stop_this_prompt
        request.admit()
        return PromptResponse(stop_reason=stop_reason_for(await ticket.wait()))

    async def _run_command(self, session: AcpSession, name: str, argument: str) -> PromptResponse:
        """A slash command (see `mode_options.COMMANDS`): handled here, the model is not asked.
        Without an argument it shows the current value and the choices, as `/rewind` lists the
        turns."""
        try:
            if not argument:
                describe = (
                    self.config.describe_mode if name == "mode" else self.config.describe_model
                )
                message = describe(session)
            elif name == "mode":
                await self.config.change_mode(session, argument)
                message = f"Mode set to {argument}."
            else:
                assert name == "model"
                self.config.change_model(session, argument)
                await self.context.presenter.config_options(
                    session.id, self.config.options_for(session)
                )
                message = f"Model set to {argument}."
        except RpcError as exc:
            message = f"The {name} was not changed: {exc.data}"
        await self._say(session, message)
        return PromptResponse(stop_reason="end_turn")

    async def _say(self, session: AcpSession, message: str) -> None:
        """An agent message outside the model's turn (a command's answer)."""
        ids = self.context.options.ids
        message_id = ids("cmd") if ids is not None else f"cmd_{rec.utc_now()}"
        await self.context.presenter.say(session.id, message, message_id)

    async def _announce_title(self, session: AcpSession, text: str | None) -> None:
        """Send the session's title once, derived from its first prompt."""
        if session.title is not None:
            return
        session.title = derive_title(text)
        if session.title is not None:
            await self.context.presenter.session_info(session.id, session.title, rec.utc_now())
