"""The process around the peer: stdio, the ACP bridge, signals, and how the process ends.

Three ways to end (see docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md):
- stdin EOF: the client will send nothing more. Our requests to it fail at once, requests in
  flight finish and are answered (a piped fixture wants its answers), then we exit 0.
- the client stops reading stdout (EPIPE, or the pipe's error condition while idle), or SIGTERM:
  it is gone. Everything is disposed within `DISPOSE_DEADLINE` and we exit 0; every child
  process tree is stopped at once with a short grace (`SHUTDOWN_GRACE`), so that SIGKILL
  reaches a child that ignores SIGTERM before we exit.

Child processes: the one `ProcessRegistry` is created here and passed down to everything that
spawns; the subreaper is set once, at start-up.
- SIGINT acts like SIGTERM only when stdin is a terminal. A terminal client's Ctrl+C reaches
  its whole process group, and a client that launched us on pipes cancels over the protocol.
"""

from __future__ import annotations

import logging
import os
import resource
import signal
import sys
import threading
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from acp_server.acp.options import ServerOptions
from acp_server.process import ProcessRegistry, become_subreaper
from acp_server.process.bubblewrap import BubblewrapProbe
from acp_server.rpc.dispatch import Router
from acp_server.rpc.peer import Peer
from acp_server.rpc.stdio import (
    FdReceiveStream,
    FdSendStream,
    is_pipe_or_socket,
    protect_stdout,
    wait_for_hangup,
)

if TYPE_CHECKING:
    from acp_server.acp.connection import AcpConnection

log = logging.getLogger(__name__)

DISPOSE_DEADLINE = 2.0
"""Seconds from "the client is gone" to process exit, whatever is still running."""
SHUTDOWN_GRACE = 0.5
"""At shutdown, seconds between SIGTERM and SIGKILL for every child process tree: short
enough that the kill and the join fit well inside `DISPOSE_DEADLINE`."""


TERMINAL_NOTICE = (
    "acp-server is an Agent Client Protocol (ACP) agent: an editor starts it and talks "
    "JSON-RPC with it over stdin and stdout, and it is waiting for that now (Ctrl-C or Ctrl-D "
    "ends it). To try it: `acp-server setup` chooses a model, `acp-server doctor` checks "
    "what a first prompt needs, and `uv run acp-fixture run examples/tour/tour.jsonl` in a "
    "checkout runs the tour, a scripted conversation."
)
"""Said on stderr when stdin is a terminal (never on stdout, the protocol's)."""


def run(options: ServerOptions) -> None:
    """Serve ACP on stdin/stdout until the client goes away."""
    protocol_fd = protect_stdout()
    _raise_open_file_limit()
    # Orphaned descendants of our children re-parent to us: the process package reaps them at
    # once and finds a double-forked grandchild by its token, even when we are PID 1.
    become_subreaper()
    stdin_is_terminal = os.isatty(0)
    if stdin_is_terminal:
        # Someone typed `acp-server` by hand; an editor never gives it a terminal.
        print(TERMINAL_NOTICE, file=sys.stderr, flush=True)
    else:
        # A Python-level no-op rather than SIG_IGN: an ignored signal stays ignored in every
        # child we exec, a handler does not.
        signal.signal(signal.SIGINT, _ignore_signal)
    anyio.run(_serve, options, protocol_fd, stdin_is_terminal)


def _raise_open_file_limit() -> None:
    """Each active session holds its journal open (the file lock lives on that descriptor), so
    a long-lived agent with many sessions would hit a default soft limit of 1024 (256 on
    macOS) long before memory matters. The hard limit is ours to use."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError) as exc:
            log.info("could not raise the open file limit from %d: %s", soft, exc)


def _ignore_signal(signum: int, frame: object) -> None:
    log.info("ignoring signal %d: the client cancels over the protocol", signum)


def _bridge() -> type[AcpConnection]:
    """The ACP bridge's connection class: its import (the protocol's types, the journal, the
    early methods) is the last ~20 ms before `initialize` can be read."""
    from acp_server.acp.connection import AcpConnection

    return AcpConnection


async def _probe_sandbox(probe: BubblewrapProbe, processes: ProcessRegistry) -> None:
    """Run the bwrap probe once; the first `session/new` (whose answer depends on it) finds the
    answer kept in `probe`. A failure here is not kept: the session asks again."""
    try:
        await probe.check(processes)
    except Exception as exc:  # shutting down, say
        log.info("sandbox probe at start-up failed: %s", exc)


async def _serve(options: ServerOptions, protocol_fd: int, stdin_is_terminal: bool) -> None:
    processes = ProcessRegistry(options.child_environment)
    sandbox_probe = BubblewrapProbe()
    async with anyio.create_task_group() as tg:
        if not options.deterministic:
            # bwrap runs while the bridge is imported in a worker thread: its answer, which
            # the first `session/new` waits for, is then ready (the ready-before-the-runtime
            # RFC). Under --deterministic the sandbox is never offered and nothing is probed.
            tg.start_soon(_probe_sandbox, sandbox_probe, processes)
        connection_class = await anyio.to_thread.run_sync(_bridge)
        await _serve_with(
            connection_class, sandbox_probe, processes, options, protocol_fd, stdin_is_terminal
        )
        tg.cancel_scope.cancel()


async def _serve_with(
    connection_class: type[AcpConnection],
    sandbox_probe: BubblewrapProbe,
    processes: ProcessRegistry,
    options: ServerOptions,
    protocol_fd: int,
    stdin_is_terminal: bool,
) -> None:
    router = Router()
    peer = Peer(
        FdReceiveStream(0),
        FdSendStream(protocol_fd),
        router,
        max_line_bytes=options.max_line_bytes,
    )
    stopping = anyio.Event()

    async def stop(reason: str) -> None:
        if stopping.is_set():
            return
        stopping.set()
        log.info("client gone (%s): disposing", reason)
        # Last resort: nothing may keep an abandoned agent alive past the deadline.
        watchdog = threading.Timer(DISPOSE_DEADLINE, os._exit, (0,))
        watchdog.daemon = True
        watchdog.start()
        with anyio.move_on_after(DISPOSE_DEADLINE - 0.3):
            async with anyio.create_task_group() as both:
                # Not after dispose: a turn's own stop gives a child the full grace, longer
                # than we have; this one overtakes it with SIGKILL after SHUTDOWN_GRACE.
                both.start_soon(processes.kill_all, SHUTDOWN_GRACE)
                await connection.dispose()
        with anyio.move_on_after(0.2):
            await peer.writer.drained()
        peer.close()

    async def watch_signals() -> None:
        signals = [signal.SIGTERM, signal.SIGINT] if stdin_is_terminal else [signal.SIGTERM]
        with anyio.open_signal_receiver(*signals) as received:
            async for signum in received:
                await stop(signal.Signals(signum).name)
                return

    async def watch_output() -> None:
        if is_pipe_or_socket(protocol_fd):
            async with anyio.create_task_group() as either:

                async def hangup() -> None:
                    await wait_for_hangup(protocol_fd)
                    either.cancel_scope.cancel()

                either.start_soon(hangup)
                await peer.writer.broken.wait()
                either.cancel_scope.cancel()
        else:
            await peer.writer.broken.wait()
        await stop("stdout closed")

    async with anyio.create_task_group() as tg:
        connection = connection_class(peer, tg, options, processes, sandbox_probe)
        connection.register(router)
        tg.start_soon(watch_signals)
        tg.start_soon(watch_output)
        await peer.run()
        if not stopping.is_set():
            # End of input: in-flight requests were answered; release what sessions hold.
            with anyio.CancelScope(shield=True), anyio.move_on_after(DISPOSE_DEADLINE):
                await connection.dispose()
                await processes.kill_all(SHUTDOWN_GRACE)
        tg.cancel_scope.cancel()
