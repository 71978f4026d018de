"""`notice` session updates: what the user should see that is not part of the conversation (an
MCP server that failed to start, a hooks file waiting for consent, a model falling back).

Sent only to clients that advertised `clientCapabilities.session.notices`, as ACP requires;
the others get what they got before (a message in the conversation, or only the log).
"""

from __future__ import annotations

from acp_protocol.initialize import ClientCapabilities, ClientSessionCapabilities
from acp_protocol.initialize import NoticeCapabilities as NoticeOptIn
from acp_protocol.session_update import Notice, NoticeSeverity

from .context import BridgeContext
from .updates import SessionUpdates


def shows_notices(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised `clientCapabilities.session.notices`."""
    session = capabilities.session
    return isinstance(session, ClientSessionCapabilities) and isinstance(
        session.notices, NoticeOptIn
    )


async def send_notice(
    context: BridgeContext,
    session_id: str,
    severity: NoticeSeverity,
    title: str,
    description: str | None = None,
) -> bool:
    """Send a notice if the client opted in; False (nothing sent) if it did not."""
    if not shows_notices(context.client_capabilities):
        return False
    notice = Notice(severity=severity, title=title, description=description)
    await SessionUpdates(context.peer, session_id).send(notice)
    return True
