"""User hooks on an ACP session: workspace hooks ask the client first.

The consent question is a permission request about a synthetic `execute` tool call, announced
by a notice to clients that take them, asked again (naming the files) when the hooks file or a
file its commands name changed since the user allowed them; the message that says which hook
blocked a prompt is the agent's own message. The session's view shows both in its wire's shapes.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from acp_server.agent import Agent
from acp_server.cancellation import TurnSignal
from acp_server.extensions.hooks import SessionHooks, load_hooks

from .context import BridgeContext
from .presenter import SessionView


def install_hooks(
    context: BridgeContext, agent: Agent, session_id: str, cwd: str, view: SessionView
) -> None:
    """Add the user's and the workspace's hooks to the session's seams; consent is asked and
    shown through the session's `view` (its wire's askers and updates)."""
    hooks = load_hooks(cwd)
    if not hooks:
        return
    ids = context.ids
    presenter = context.presenter

    async def consent(path: str, signal: TurnSignal, changed: Sequence[str]) -> bool:
        call_id = ids("hooks")
        title = f"Run hooks from {path}"
        if changed:
            # Asked again: what the user allowed is not what would run now.
            title += f" (changed since you allowed them: {', '.join(changed)})"
        commands = "\n".join(f"{h.event}: {h.command}" for h in hooks if h.path == path)
        await presenter.notice(
            session_id,
            "info",
            f"Hooks file {path} waits for your consent",
            f"Answer the permission request to run its hooks or not:\n{commands}",
        )
        await view.consent_asked(call_id, title, commands, path)
        allowed = False
        try:
            answer = await view.permissions.ask(
                call_id, title, "the workspace carries hooks", signal
            )
            allowed = answer in ("allow_once", "allow_always")
        finally:
            with anyio.CancelScope(shield=True):
                await view.consent_answered(call_id, allowed)
        return allowed

    async def notify(text: str) -> None:
        await presenter.say(session_id, text, ids("msg"))

    SessionHooks(
        hooks,
        session_id=session_id,
        cwd=cwd,
        consent=consent,
        notify=notify,
        processes=context.processes,
    ).install(agent)
