"""The runtime half of the v1 presenter for one session: runtime events rendered by
`acp/updates.py` (`SessionUpdates`, linking `task` calls to their child sessions for a client
that opted into them), the v1 permission and form askers, and the synthetic tool call a hooks
consent question is about."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from acp_protocol.content import TextContent
from acp_protocol.tool_call import ContentToolCallContent, ToolCall, ToolCallUpdate
from acp_server.agent import AgentEvent
from acp_server.process.background import BackgroundItems
from acp_server.session import records as rec

from .client_requests import AcpFormAsker, AcpPermissionAsker
from .context import BridgeContext
from .plans import shows_plan_operations, view_after
from .updates import SessionUpdates, shows_compactions


class V1SessionView:
    """One session on a v1 connection (see `acp/presenter.py`'s `SessionView`)."""

    def __init__(
        self,
        context: BridgeContext,
        session_id: str,
        records: Sequence[rec.Record],
        links: dict[str, str] | None = None,
    ) -> None:
        caps = context.client_capabilities
        announced: dict[str, Mapping[str, Any]] = {}  # inputs a permission request shows whole
        self._updates = SessionUpdates(
            context.peer,
            session_id,
            compaction=shows_compactions(caps),
            plans=view_after(records, shows_plan_operations(caps)),
            announced=announced,
            links=links,
        )
        self.permissions = AcpPermissionAsker(context.peer, session_id, announced)
        self.forms = AcpFormAsker(context.peer, session_id)

    async def __call__(self, event: AgentEvent) -> None:
        await self._updates(event)

    def show_background(self, items: BackgroundItems) -> None:
        """Nothing: v1 cannot show work between turns; the model's `bash_output` and
        `bash_stop` calls show the items in the turns that touch them (the background-work
        RFC)."""

    async def consent_asked(self, call_id: str, title: str, commands: str, path: str) -> None:
        await self._updates.send(
            ToolCall(
                tool_call_id=call_id,
                title=title,
                kind="execute",
                status="pending",
                content=[ContentToolCallContent(content=TextContent(text=commands))],
                raw_input={"path": path},
            )
        )

    async def consent_answered(self, call_id: str, allowed: bool) -> None:
        await self._updates.send(
            ToolCallUpdate(tool_call_id=call_id, status="completed" if allowed else "failed")
        )
