"""One client connection: the handler table of every ACP method, and how it ends.

The connection composes the method groups around one `BridgeContext`: the handshake is built at
once; the groups that need the runtime (acp/runtime_methods.py) on the first session method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from anyio.abc import TaskGroup

from acp_protocol import methods as m
from acp_server.process import ProcessRegistry
from acp_server.rpc.handlers import HandlerTable, RequestHandler
from acp_server.rpc.jsonrpcserver_adapter import JsonRpcDispatcher
from acp_server.rpc.peer import IncomingRequest, Peer

from .context import BridgeContext
from .handshake import Handshake
from .options import ServerOptions
from .sessions import AcpSession

if TYPE_CHECKING:
    from .runtime_methods import RuntimeMethods


class AcpConnection:
    """ACP state of one client: its capabilities and its sessions."""

    def __init__(
        self, peer: Peer, task_group: TaskGroup, options: ServerOptions, processes: ProcessRegistry
    ) -> None:
        self.context = BridgeContext(peer, task_group, options, processes)
        self.handshake = Handshake(self.context)
        self._dispatcher: JsonRpcDispatcher | None = None
        self._runtime: RuntimeMethods | None = None

    def handler_table(self) -> HandlerTable:
        """Every method this agent answers, by its `acp_protocol.methods` name."""
        deferred = self._deferred
        return HandlerTable(
            requests={
                m.INITIALIZE: self.handshake.initialize,
                m.AUTHENTICATE: self.handshake.authenticate,
                m.SESSION_NEW: deferred(lambda r: r.sessions.new_session),
                m.SESSION_LOAD: deferred(lambda r: r.sessions.load_session),
                m.SESSION_RESUME: deferred(lambda r: r.sessions.resume_session),
                m.SESSION_FORK: deferred(lambda r: r.sessions.fork_session),
                m.SESSION_LIST: deferred(lambda r: r.sessions.list_sessions),
                m.SESSION_CLOSE: deferred(lambda r: r.sessions.close_session),
                m.SESSION_DELETE: deferred(lambda r: r.sessions.delete_session),
                m.SESSION_SET_MODE: deferred(lambda r: r.config.set_mode),
                m.SESSION_SET_CONFIG_OPTION: deferred(lambda r: r.config.set_config_option),
                m.SESSION_PROMPT: deferred(lambda r: r.prompts.prompt),
            },
            notifications={m.SESSION_CANCEL: self._cancel},
            gate=self.handshake.check_order,
        )

    def register(self, dispatcher: JsonRpcDispatcher) -> None:
        """Install this connection's handler table."""
        self._dispatcher = dispatcher
        dispatcher.install(self.handler_table())

    async def preload_when_initialized(self) -> None:
        """Load the dispatcher after the handshake answer is out, so it never delays it."""
        await self.handshake.initialized.wait()
        await self.context.peer.writer.drained()
        if self._dispatcher is not None:
            await self._dispatcher.load()

    async def dispose(self) -> None:
        """Dispose every session (running turns end `disposed`) and close its journal."""
        if self._runtime is None:
            return
        wiring = self._runtime.wiring

        async def release(session: AcpSession) -> None:
            await wiring.release(session, cancel_first=False)

        async with anyio.create_task_group() as tg:
            for session in self.context.sessions:
                tg.start_soon(release, session)
        # Deferred: acp_server.models.http takes ~40 ms to import (python -X importtime), and
        # a connection that never loaded an HTTP provider has only no-op closes to do.
        from acp_server.models.http import close_provider

        for provider in self.context.providers.values():
            await close_provider(provider)

    def _methods(self) -> RuntimeMethods:
        if self._runtime is None:
            # Deferred on purpose: the runtime's import (agent, journal, tools, models) would
            # otherwise be paid by every editor spawn before `initialize` is answered; the figure
            # is in docs/rfc/implemented/architecture/2026-12-01-layers-and-bridge.md.
            from .runtime_methods import RuntimeMethods

            self._runtime = RuntimeMethods(self.context)
        return self._runtime

    def _deferred(self, pick: Callable[[RuntimeMethods], RequestHandler]) -> RequestHandler:
        """A handler that builds the runtime's method groups on its first call."""

        async def handle(request: IncomingRequest, params: msgspec.Raw | None) -> Any:
            return await pick(self._methods())(request, params)

        return handle

    async def _cancel(self, params: msgspec.Raw | None) -> None:
        await self._methods().prompts.cancel(params)
