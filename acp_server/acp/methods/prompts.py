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
from acp_server.agent import Agent
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
from ..rewind import RewindMethods, RewindNotice
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


def prompt_text(prompt: PromptRequest) -> str:
    """The prompt's text blocks, one per line (what slash commands and titles are read from)."""
    return "\n".join(p.text for p in prompt.prompt if isinstance(p, TextContent))


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


@dataclass(frozen=True)
class LocalCommand:
    """A slash command answered here, without the model (`/rewind`, `/mode`, `/model`)."""

    name: str
    argument: str


@dataclass(frozen=True)
class Unreadable:
    """A custom command whose file could not be read: only said, never run."""

    message: str


@dataclass(frozen=True)
class Compaction:
    """`/compact [instructions]`."""

    instructions: str


@dataclass(frozen=True)
class FollowUp:
    """A prompt for the model (a custom command's already expanded)."""

    prompt: PromptRequest


PromptStep = LocalCommand | Unreadable | Compaction | FollowUp
"""What a prompt turns out to be, whichever wire asked (see `PromptMethods.step`)."""


@dataclass
class PromptMethods:
    """`session/prompt` (v1's) and `session/cancel` of one connection, and the steps of a
    prompt both wires take (acp/v2/prompts.py answers v2's)."""

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
        text = prompt_text(prompt)
        step = await self.step(session, prompt)
        if isinstance(step, LocalCommand):
            await self.say(session, await self.run_command(request, session, step))
            return PromptResponse(stop_reason="end_turn")
        if isinstance(step, Compaction):
            return await self._compact(request, session, step.instructions)
        if isinstance(step, Unreadable):
            request.admit()
            await self.say(session, step.message)
            return PromptResponse(stop_reason="end_turn")
        agent, parts = await self.follow_up(session, step.prompt)
        ticket = agent.followup(parts)

        # `$/cancel_request` for this prompt stops it alone: dropped if queued, aborted (queue
        # kept) if running. Admitted only now, so a cancel on the next line finds it queued.
        def stop_this_prompt() -> None:
            if not ticket.withdraw() and ticket.state == "running":
                agent.cancel(UserCancel(), keep_inbox=True)

        request.on_cancel_request = stop_this_prompt
        request.admit()
        await self.announce_title(session, text)
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

    async def step(self, session: AcpSession, prompt: PromptRequest) -> PromptStep:
        """What the prompt is: one of our slash commands, a custom command (expanded, or
        unreadable), or a prompt for the model. The command list is scanned again first (a new
        list is sent if the files changed), and a skill found since the session started is
        offered from now on."""
        text = prompt_text(prompt)
        single = len(prompt.prompt) == 1
        refuse_while_rewinding(session)
        scan = await refresh_commands(self.context, session, in_prompt=True)
        if any(c.skill for c in scan.commands.values()):
            session.toolbox.offer_skill()  # when a skill appeared since the session started
        command = slash_command(text, self.context.options.offered_models) if single else None
        if command is not None:
            name, argument = command
            return Compaction(argument) if name == "compact" else LocalCommand(name, argument)
        custom = custom_invocation(text, scan) if single else None
        if custom is None:
            return FollowUp(prompt)
        try:
            expanded = expand(scan, *custom)
        except CommandUnreadable as exc:
            return Unreadable(f"The /{custom[0]} command was not run: {exc}")
        return FollowUp(
            PromptRequest(session_id=prompt.session_id, prompt=[TextContent(text=expanded)])
        )

    async def follow_up(
        self, session: AcpSession, prompt: PromptRequest
    ) -> tuple[Agent, list[rec.Part]]:
        """The session's agent and the prompt's parts, once its MCP servers are connected (or
        given up on); the how-to without a model (or after a logout)."""
        agent = self.agent_of(session)
        await self.wiring.before_prompt(session)  # MCP servers still connecting
        parts = await session.toolbox.read_links(parts_from_prompt(prompt.prompt))
        refuse_while_rewinding(session)  # again: one may have started during the awaits
        return agent, parts

    def agent_of(self, session: AcpSession) -> Agent:
        """The session's agent; the how-to without a model (or after a logout)."""
        agent = session.agent
        if agent is None or self.context.logged_out:
            raise no_model(self.context.options.config_path)
        return agent

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
        agent = self.agent_of(session)
        refuse_while_rewinding(session)
        ticket = agent.compact(instructions or None)

        def stop_this_prompt() -> None:
            if not ticket.withdraw() and ticket.state == "running":
                agent.cancel(UserCancel(), keep_inbox=True)

        request.on_cancel_request = stop_this_prompt
        request.admit()
        return PromptResponse(stop_reason=stop_reason_for(await ticket.wait()))

    async def run_command(
        self, request: IncomingRequest, session: AcpSession, command: LocalCommand
    ) -> str | RewindNotice:
        """Run a slash command (see `mode_options.COMMANDS`) here, without the model; the text
        that answers it (a rewind's notice for `/rewind N` that rewound). Without an argument
        `/mode` and `/model` show the current value and the choices, as `/rewind` lists the
        turns."""
        name, argument = command.name, command.argument
        if name == "rewind":
            return await self.rewinds.command(request, session, argument)
        request.admit()
        try:
            if not argument:
                describe = (
                    self.config.describe_mode if name == "mode" else self.config.describe_model
                )
                return describe(session)
            if name == "mode":
                await self.config.change_mode(session, argument)
                return f"Mode set to {argument}."
            assert name == "model"
            self.config.change_model(session, argument)
            await self.context.presenter.config_options(
                session.id, self.config.options_for(session)
            )
            return f"Model set to {argument}."
        except RpcError as exc:
            return f"The {name} was not changed: {exc.data}"

    async def say(self, session: AcpSession, answer: str | RewindNotice) -> None:
        """A command's answer as the agent's message, outside the model's turn: a text under
        a fresh id of the connection's id source (unique in the session, as every message id
        is); a rewind's notice under the rewind's own id, the one its replay shows."""
        say = self.context.presenter.say
        if isinstance(answer, str):
            await say(session.id, answer, self.context.ids("cmd"))
            return
        await say(session.id, answer.text, answer.message_id)
        if answer.not_saved is not None:
            await say(session.id, answer.not_saved, self.context.ids("cmd"))

    async def announce_title(self, session: AcpSession, text: str | None) -> None:
        """Send the session's title once, derived from its first prompt."""
        if session.title is not None:
            return
        session.title = derive_title(text)
        if session.title is not None:
            await self.context.presenter.session_info(session.id, session.title, rec.utc_now())
