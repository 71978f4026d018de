"""Sending one `session/update`: the one place that frames it. It imports no runtime, so a new
session's first updates (its commands, a notice) can go out before the runtime is loaded."""

from __future__ import annotations

from acp_protocol.methods import SESSION_UPDATE
from acp_protocol.session_update import SessionNotification, SessionUpdate
from acp_server.rpc.peer import Peer


async def send_update(peer: Peer, session_id: str, update: SessionUpdate) -> None:
    """Queue one update of `session_id` on the peer's ordered writer."""
    await peer.notify(SESSION_UPDATE, SessionNotification(session_id=session_id, update=update))
