"""One client connection: its route table, and how it ends.

The connection composes the method groups around one `BridgeContext`; each group declares the
routes of its handlers (`routes()`, a row of `acp_protocol.methods.V1` and a handler each). The
connection's first `initialize` chooses its ACP version for good: v1's table until then, v2's
(acp_protocol/v2/methods.py, the groups of acp/v2/ and the v1 handlers of the methods v2 kept)
from the answer of an `initialize` that chose v2 on. The
handshake, the part of `session/new` its answer waits for (acp/opening.py) and `session/cancel`
are routed at once and import no runtime. The groups that need the runtime
(acp/methods/runtime.py) are loaded by the warm-up: after the first `session/new` answer is
written (or on the first call that needs them, if that comes first), in a worker thread, so the
event loop keeps serving; the router waits for it (`RouteTable.load`) before it routes a
method that only those groups serve. The warm-up then wires every session answered meanwhile
and installs the whole table; every call that needs the runtime, `session/prompt` and
`session/cancel` included, waits for it before it is admitted, so it behaves exactly as it does
later. See docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import logging
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from acp_protocol import errors
from acp_protocol.methods import METHODS, V1
from acp_protocol.newer import NewSessionWithPrompt
from acp_protocol.session import CancelNotification, NewSessionResponse
from acp_protocol.v2 import session as v2s
from acp_protocol.v2 import unstable as v2u
from acp_protocol.v2.methods import METHODS as V2_METHODS
from acp_protocol.v2.methods import V2
from acp_server.process import ProcessRegistry
from acp_server.process.bubblewrap import BubblewrapProbe
from acp_server.rpc.dispatch import NotificationRoute, Route, Router, RouteTable
from acp_server.rpc.handlers import RpcError
from acp_server.rpc.peer import IncomingRequest, Peer
from acp_server.session.journal import JournalStore
from acp_server.session.journal_format import JournalError

from .context import BridgeContext
from .methods.handshake import Handshake
from .opening import SessionOpening, SessionStart
from .options import ServerOptions
from .sessions import AcpSession
from .v1_presenter import V1Presenter
from .v2 import params as v2params
from .v2 import shapes as v2shapes

if TYPE_CHECKING:
    from .methods.runtime import RuntimeMethods

log = logging.getLogger(__name__)

RUNTIME_MODULE = "acp_server.acp.methods.runtime"
"""Everything the runtime's method groups need (agent, tools, models, session wiring)."""


def _load_runtime() -> None:
    """Import the runtime (in a worker thread), then hand the memory the imports freed back
    to the system: without that, the worker thread's malloc arena keeps ~3 MiB of idle RSS
    (figures in the RFC)."""
    importlib.import_module(RUNTIME_MODULE)
    try:
        trim = ctypes.CDLL(None).malloc_trim  # glibc; elsewhere there is nothing to trim
    except (AttributeError, OSError):
        return
    trim(0)


class AcpConnection:
    """ACP state of one client: its capabilities and its sessions."""

    def __init__(
        self,
        peer: Peer,
        task_group: TaskGroup,
        options: ServerOptions,
        processes: ProcessRegistry,
        sandbox_probe: BubblewrapProbe | None = None,
    ) -> None:
        """`sandbox_probe`: the server's, started before the bridge was imported (none: one
        of its own, run by the first session)."""
        self.context = BridgeContext(
            peer, task_group, options, processes, sandbox_probe=sandbox_probe or BubblewrapProbe()
        )
        self.context.presenter = V1Presenter(self.context)  # until initialize chooses v2
        self.handshake = Handshake(self.context, on_v2=self._speak_v2)
        self.opening = SessionOpening(self.context, JournalStore(options.data_dir))
        self._router: Router | None = None
        self._runtime: RuntimeMethods | None = None
        self._starts: list[SessionStart] = []
        """New sessions answered before the runtime was loaded, to be wired by the warm-up."""
        self._warming = anyio.Lock()
        self._disposed = False

    def routes(self) -> RouteTable:
        """Every method this agent answers so far in the connection's version: the handshake,
        `session/new` and `session/cancel` from the start, the runtime's groups once the
        warm-up has loaded them (until then, `load` waits for it)."""
        runtime = self._runtime
        if self.handshake.version == 2:
            return RouteTable.of(
                V2_METHODS,
                [
                    *self.handshake.v2.routes(),
                    Route(V2.session_new, self._new_session_v2),
                    NotificationRoute(V2.session_cancel, self._cancel),
                    *(runtime.v2_routes() if runtime is not None else ()),
                ],
                gate=self.handshake.check_order,
                load=self._load_routes if runtime is None else None,
            )
        return RouteTable.of(
            METHODS,
            [
                *self.handshake.routes(),
                Route(V1.session_new, self._new_session),
                NotificationRoute(V1.session_cancel, self._cancel),
                *(runtime.routes() if runtime is not None else ()),
            ],
            gate=self.handshake.check_order,
            load=self._load_routes if runtime is None else None,
        )

    def register(self, router: Router) -> None:
        """Install this connection's route table."""
        self._router = router
        router.install(self.routes())

    async def _new_session(
        self, request: IncomingRequest, new: NewSessionWithPrompt
    ) -> NewSessionResponse:
        start, response = await self.opening.open(new)
        runtime = self._runtime
        if runtime is not None:
            runtime.sessions.start_new(start)  # cleans up and raises when it fails
        request.after_response.append(functools.partial(self.opening.announce, start))
        if runtime is None:
            # The answer first: the runtime loads while the user types.
            self._starts.append(start)
            request.after_response.append(self.warm_up)
        return response

    def _speak_v2(self) -> None:
        """`initialize` chose v2: route by the v2 table from the next line on (its handler has
        not returned, so the reader has not read past it)."""
        if self._router is not None:
            self._router.install(self.routes())

    async def _new_session_v2(
        self, request: IncomingRequest, new: v2u.NewSessionWithPrompt
    ) -> v2s.NewSessionResponse:
        """v2's `session/new`: v1's, its params and answer in v2's shapes."""
        opened = await self._new_session(request, v2params.new_params(new))
        options = opened.config_options if isinstance(opened.config_options, list) else []
        return v2s.NewSessionResponse(
            session_id=opened.session_id, config_options=v2shapes.config_options(options)
        )

    async def warm_up(self) -> None:
        """Load the runtime in a worker thread, then wire every session answered meanwhile
        and route the runtime's methods. Once; callers meanwhile wait, callers after return
        at once."""
        async with self._warming:
            if self._runtime is not None or self._disposed:
                return
            await anyio.to_thread.run_sync(_load_runtime)
            if self._disposed:  # the connection ended meanwhile: its journals are closed
                return
            from .methods.runtime import RuntimeMethods  # imported: only binds the name

            runtime = RuntimeMethods(self.context, self.opening.store)
            for start in self._starts:
                try:
                    runtime.sessions.start_new(start)
                except Exception:
                    # Its answer is out; its journal is gone, so later calls say "not found".
                    log.exception("session %s could not be started", start.session_id)
            self._starts.clear()
            self._runtime = runtime
            if self._router is not None:
                self._router.install(self.routes())

    async def dispose(self) -> None:
        """Dispose every session (running turns end `disposed`) and close its journal."""
        self._disposed = True
        for start in self._starts:  # answered, never wired: the journal stays, loadable
            with contextlib.suppress(JournalError, OSError):
                start.journal.close()
        self._starts.clear()
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

    async def _methods(self) -> RuntimeMethods:
        """The runtime's method groups, once the warm-up has loaded them and wired every
        session answered before."""
        if self._runtime is None:
            await self.warm_up()
        if self._runtime is None:  # disposed meanwhile: the connection is ending
            raise RpcError(errors.REQUEST_CANCELLED, "Request cancelled", "the agent is stopping")
        return self._runtime

    async def _load_routes(self) -> None:
        """The table's `load`: the warm-up, which installs the runtime's routes."""
        await self._methods()

    async def _cancel(self, cancel: CancelNotification) -> None:
        if not self._disposed:  # else nothing is left to cancel
            await (await self._methods()).prompts.cancel(cancel)
