"""`notice` session updates: what the user should see that is not part of the conversation (an
MCP server that failed to start, a hooks file waiting for consent, a model falling back).

On v1 they are sent only to clients that advertised `clientCapabilities.session.notices`, as ACP
requires; the others get what they got before (a message in the conversation, or only the log).
v2 has notices without an opt-in. The connection's presenter (acp/presenter.py) sends them.
"""

from __future__ import annotations

from acp_protocol.initialize import ClientCapabilities, ClientSessionCapabilities
from acp_protocol.initialize import NoticeCapabilities as NoticeOptIn


def shows_notices(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised `clientCapabilities.session.notices`."""
    session = capabilities.session
    return isinstance(session, ClientSessionCapabilities) and isinstance(
        session.notices, NoticeOptIn
    )
