"""One client connection: the route table of every ACP method, and how it ends.

The connection composes the method groups around one `BridgeContext`. The handshake and the
part of `session/new` its answer waits for (acp/opening.py) are built at once and import no
runtime; they are the table's early methods, run by the router itself, without its
jsonrpcserver engine. The groups that need the runtime (acp/methods/runtime.py) are loaded by
the warm-up: after the first `session/new` answer is queued (or on the first call that needs
them, if that comes first), in a worker thread, so the event loop keeps serving. The warm-up
then wires every session answered meanwhile; every call that needs the runtime,
`session/prompt` and `session/cancel` included, waits for it before it is admitted, so it
behaves exactly as it does later. See
docs/rfc/implemented/architecture/2026-12-01-ready-before-the-runtime.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from acp_protocol import errors
from acp_protocol import methods as m
from acp_protocol.initialize import AuthenticateRequest, LogoutRequest
from acp_protocol.newer import (
    LoadSessionWithPrompt,
    NewerInitializeRequest,
    NewSessionWithPrompt,
    ResumeSessionWithPrompt,
)
from acp_protocol.session import (
    CancelNotification,
    CloseSessionRequest,
    DeleteSessionRequest,
    ListSessionsRequest,
    NewSessionResponse,
    PromptRequest,
    SetSessionConfigOptionRequest,
    SetSessionModeRequest,
)
from acp_protocol.unstable import ForkSessionRequest
from acp_protocol.v2 import initialize as v2i
from acp_protocol.v2 import methods as m2
from acp_protocol.v2 import session as v2s
from acp_protocol.v2 import unstable as v2u
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
from .rewind_params import RewindRequest
from .sessions import AcpSession
from .v2 import params as v2params
from .v2 import shapes as v2shapes

if TYPE_CHECKING:
    from .methods.runtime import RuntimeMethods

log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")
Handler = Callable[[IncomingRequest, P], Awaitable[R]]

REWIND_METHOD = "_session/rewind"
"""The AIR session-rewind extension (acp/rewind.py), named as the Claude and Codex adapters do."""

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
        self.handshake = Handshake(self.context, on_v2=self._speak_v2)
        self.opening = SessionOpening(self.context, JournalStore(options.data_dir))
        self._router: Router | None = None
        self._runtime: RuntimeMethods | None = None
        self._starts: list[SessionStart] = []
        """New sessions answered before the runtime was loaded, to be wired by the warm-up."""
        self._warming = anyio.Lock()
        self._disposed = False

    def routes(self) -> RouteTable:
        """Every method this agent answers in the connection's version, by its method table's
        name, with the type its params decode into (the table's, or one widened by the newer
        surface): v1's until `initialize` chose v2."""
        if self.handshake.version == 2:
            return self._v2_routes()
        deferred = self._deferred
        return RouteTable(
            requests={
                m.INITIALIZE: Route(NewerInitializeRequest, self.handshake.initialize),
                m.AUTHENTICATE: Route(AuthenticateRequest, self.handshake.authenticate),
                m.LOGOUT: Route(LogoutRequest, self.handshake.logout),
                m.SESSION_NEW: Route(NewSessionWithPrompt, self._new_session),
                m.SESSION_LOAD: Route(
                    LoadSessionWithPrompt, deferred(lambda r: r.sessions.load_session)
                ),
                m.SESSION_RESUME: Route(
                    ResumeSessionWithPrompt, deferred(lambda r: r.sessions.resume_session)
                ),
                m.SESSION_FORK: Route(
                    ForkSessionRequest, deferred(lambda r: r.sessions.fork_session)
                ),
                m.SESSION_LIST: Route(
                    ListSessionsRequest, deferred(lambda r: r.listing.list_sessions)
                ),
                m.SESSION_CLOSE: Route(
                    CloseSessionRequest, deferred(lambda r: r.sessions.close_session)
                ),
                m.SESSION_DELETE: Route(
                    DeleteSessionRequest, deferred(lambda r: r.sessions.delete_session)
                ),
                m.SESSION_SET_MODE: Route(
                    SetSessionModeRequest, deferred(lambda r: r.config.set_mode)
                ),
                m.SESSION_SET_CONFIG_OPTION: Route(
                    SetSessionConfigOptionRequest, deferred(lambda r: r.config.set_config_option)
                ),
                m.SESSION_PROMPT: Route(PromptRequest, deferred(lambda r: r.prompts.prompt)),
                REWIND_METHOD: Route(RewindRequest, deferred(lambda r: r.rewinds.extension)),
            },
            notifications={m.SESSION_CANCEL: NotificationRoute(CancelNotification, self._cancel)},
            gate=self.handshake.check_order,
            early=frozenset({m.INITIALIZE, m.AUTHENTICATE, m.SESSION_NEW}),
        )

    def _v2_routes(self) -> RouteTable:
        """The v2 table (acp_protocol/v2/methods.py): v2's own handlers (acp/v2/), and the
        shared ones where the method kept its shape. Methods only v1 has are absent (-32601)."""
        deferred, v2 = self._deferred, self.handshake.v2
        return RouteTable(
            requests={
                m.INITIALIZE: Route(v2i.InitializeRequest, v2.initialize),
                m2.AUTH_LOGIN: Route(v2i.LoginAuthRequest, v2.login),
                m2.AUTH_LOGOUT: Route(v2i.LogoutAuthRequest, v2.logout),
                m.SESSION_NEW: Route(v2u.NewSessionWithPrompt, self._new_session_v2),
                m.SESSION_RESUME: Route(
                    v2u.ResumeSessionWithPrompt, deferred(lambda r: r.v2_sessions.resume)
                ),
                m.SESSION_FORK: Route(
                    v2u.ForkSessionRequest, deferred(lambda r: r.v2_sessions.fork)
                ),
                m.SESSION_LIST: Route(
                    ListSessionsRequest, deferred(lambda r: r.listing.list_sessions)
                ),
                m.SESSION_CLOSE: Route(
                    CloseSessionRequest, deferred(lambda r: r.v2_sessions.close)
                ),
                m.SESSION_DELETE: Route(
                    DeleteSessionRequest, deferred(lambda r: r.sessions.delete_session)
                ),
                m.SESSION_SET_CONFIG_OPTION: Route(
                    SetSessionConfigOptionRequest,
                    deferred(lambda r: r.v2_sessions.set_config_option),
                ),
                m.SESSION_PROMPT: Route(PromptRequest, deferred(lambda r: r.v2_prompts.prompt)),
                m2.TOOL_CALL_CANCEL: Route(
                    v2s.CancelToolCallRequest, deferred(lambda r: r.v2_sessions.cancel_tool_call)
                ),
                m2.TERMINAL_CANCEL: Route(
                    v2s.CancelTerminalRequest, deferred(lambda r: r.v2_sessions.cancel_terminal)
                ),
                REWIND_METHOD: Route(RewindRequest, deferred(lambda r: r.rewinds.extension)),
            },
            notifications={m.SESSION_CANCEL: NotificationRoute(CancelNotification, self._cancel)},
            gate=self.handshake.check_order,
            early=frozenset({m.INITIALIZE, m2.AUTH_LOGIN, m2.AUTH_LOGOUT, m.SESSION_NEW}),
        )

    def _speak_v2(self) -> None:
        """`initialize` chose v2: route by the v2 table from the next line on (its handler
        has not returned, so the reader has not read past it)."""
        if self._router is not None:
            self._router.install(self.routes())

    async def _new_session_v2(
        self, request: IncomingRequest, new: v2u.NewSessionWithPrompt
    ) -> v2s.NewSessionResponse:
        opened = await self._new_session(request, v2params.new_params(new))
        options = opened.config_options if isinstance(opened.config_options, list) else []
        return v2s.NewSessionResponse(
            session_id=opened.session_id, config_options=v2shapes.config_options(options)
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

    async def warm_up(self) -> None:
        """Load the router's engine (jsonrpcserver) and the runtime in worker threads, then
        wire every session answered meanwhile. Once; callers meanwhile wait, callers after
        return at once."""
        async with self._warming:
            if self._runtime is not None or self._disposed:
                return
            if self._router is not None:
                await self._router.load()
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

    def _deferred(self, pick: Callable[[RuntimeMethods], Handler[P, R]]) -> Handler[P, R]:
        """A handler that waits for the runtime's method groups (see `warm_up`)."""

        async def handle(request: IncomingRequest, params: P) -> R:
            return await pick(await self._methods())(request, params)

        return handle

    async def _cancel(self, cancel: CancelNotification) -> None:
        if not self._disposed:  # else nothing is left to cancel
            await (await self._methods()).prompts.cancel(cancel)
