"""Sending one `session/update`: the one place that frames it (plan operations, newer than the
stable schema, in the newer notification). It imports no runtime, so a new session's first
updates (its commands, a notice) can go out before the runtime is loaded."""

from __future__ import annotations

from acp_protocol.methods import SESSION_UPDATE
from acp_protocol.newer import NewerSessionNotification, NewerSessionUpdate
from acp_protocol.plan_operations import PlanRemoved, PlanUpdate
from acp_protocol.session_update import SessionNotification
from acp_server.rpc.peer import Peer


async def send_update(peer: Peer, session_id: str, update: NewerSessionUpdate) -> None:
    """Queue one update of `session_id` on the peer's ordered writer."""
    notification = (
        SessionNotification(session_id=session_id, update=update)
        if not isinstance(update, (PlanUpdate, PlanRemoved))
        else NewerSessionNotification(session_id=session_id, update=update)
    )
    await peer.notify(SESSION_UPDATE, notification)
