"""Sending one stable `session/update` without the runtime: a new session's commands and a
notice go out through here before the runtime is loaded. A session's runtime events go through
`acp/updates.py` (`SessionUpdates`), which also frames the newer update kinds."""

from __future__ import annotations

from acp_protocol.methods import SESSION_UPDATE
from acp_protocol.session_update import SessionNotification, SessionUpdate
from acp_server.rpc.peer import Peer


async def send_update(peer: Peer, session_id: str, update: SessionUpdate) -> None:
    """Queue one update of `session_id` on the peer's ordered writer."""
    await peer.notify(SESSION_UPDATE, SessionNotification(session_id=session_id, update=update))
