"""User hooks on an ACP session: workspace hooks ask the client first.

The consent question is a permission request about a synthetic `execute` tool call, announced
by a notice to clients that take them, asked again (naming the files) when the hooks file or a
file its commands name changed since the user allowed them; the message that says which hook
blocked a prompt is an agent message chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from acp_protocol.content import TextContent
from acp_protocol.session_update import AgentMessageChunk
from acp_protocol.tool_call import ContentToolCallContent, ToolCall, ToolCallUpdate
from acp_server.agent import Agent
from acp_server.cancellation import TurnSignal
from acp_server.extensions.hooks import SessionHooks, load_hooks

from .client_requests import AcpPermissionAsker
from .context import BridgeContext
from .notices import send_notice
from .updates import SessionUpdates


def install_hooks(context: BridgeContext, agent: Agent, session_id: str, cwd: str) -> None:
    """Add the user's and the workspace's hooks to the session's seams."""
    hooks = load_hooks(cwd)
    if not hooks:
        return
    peer = context.peer
    ids = context.ids
    updates = SessionUpdates(peer, session_id)
    asker = AcpPermissionAsker(peer, session_id)

    async def consent(path: str, signal: TurnSignal, changed: Sequence[str]) -> bool:
        call_id = ids("hooks")
        title = f"Run hooks from {path}"
        if changed:
            # Asked again: what the user allowed is not what would run now.
            title += f" (changed since you allowed them: {', '.join(changed)})"
        commands = "\n".join(f"{h.event}: {h.command}" for h in hooks if h.path == path)
        await send_notice(
            context,
            session_id,
            "info",
            f"Hooks file {path} waits for your consent",
            f"Answer the permission request to run its hooks or not:\n{commands}",
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
        await updates.send(AgentMessageChunk(content=TextContent(text=text), message_id=ids("msg")))

    SessionHooks(
        hooks,
        session_id=session_id,
        cwd=cwd,
        consent=consent,
        notify=notify,
        processes=context.processes,
    ).install(agent)
