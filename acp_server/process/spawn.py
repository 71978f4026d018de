"""`spawn`: the one way the agent starts a child process (tools, hooks and MCP servers).

The child leads its own session and process group, carries a token in its environment that
marks its descendants, is registered with the server's registry for the time it lives, and
on every way out of the block its whole tree is stopped and joined (shielded). See the
package docstring for the rules.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from subprocess import DEVNULL, PIPE

import anyio
from anyio.abc import Process

from acp_server.process.descendants import TOKEN_VARIABLE, new_token
from acp_server.process.groups import JOIN_TIMEOUT, ProcessRegistry, ProcessTree, stop_trees
from acp_server.process.lifeline import LIFELINE

_LEADER_TIMEOUT = 1.0
"""After the tree is gone, how long to wait for the event loop to report the leader's
exit status (it was already reaped; this only covers the callback's latency)."""


class Child:
    """A spawned process and its tree."""

    __slots__ = ("process", "survivors", "tree")

    def __init__(self, process: Process, tree: ProcessTree) -> None:
        self.process = process
        self.tree = tree
        self.survivors: list[int] | None = None
        """Set by the first `settle`: pids still there after the join (normally none)."""

    async def settle(self, grace: float) -> list[int]:
        """Stop and join the tree if anything of it is left (SIGTERM, up to `grace`
        seconds, SIGKILL, join); return the survivors. Harmless to call again."""
        leader_reaped = anyio.Event()
        process = self.process

        async def reap_leader() -> None:
            # asyncio's child watcher reaps the leader by itself; trio only inside wait().
            await process.wait()
            leader_reaped.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(reap_leader)
            survivors = await stop_trees([self.tree], grace, JOIN_TIMEOUT)
            if self.tree.pgid not in survivors:
                with anyio.move_on_after(_LEADER_TIMEOUT):
                    await leader_reaped.wait()
            tg.cancel_scope.cancel()
        if self.survivors is None:
            self.survivors = survivors
        return survivors


@asynccontextmanager
async def spawn(
    argv: Sequence[str],
    *,
    registry: ProcessRegistry | None,
    cwd: str | None,
    env: Mapping[str, str] | None = None,
    stdin: int = DEVNULL,
    stderr: int | None = PIPE,
    grace: float = 2.0,
    watched: bool = True,
) -> AsyncIterator[Child]:
    """Start `argv` in its own session and group; yield it; stop and join its whole tree
    when the block ends, however it ends.

    - `registry`: where the tree is registered while it lives, so server shutdown can stop
      it (None: a standalone call nobody else needs to stop). A closed registry raises
      `RegistryClosed` and spawns nothing.
    - `env` is the child's environment when given; else the registry's, else ours. The
      descendants' token is added to it.
    - stdout is always a pipe; `stdin` is `/dev/null` unless the caller asks for a pipe;
      `stderr` is a pipe, or None for our fd 2 (never fd 1: that is the protocol).
    - The watchdog (`acp_server.process.lifeline`) watches the call from before the fork
      until its tree is joined: if this process dies without stopping the tree (SIGKILL),
      the watchdog does. Linux only. `watched=False` is for a child that dies with us by
      itself (bubblewrap's `--die-with-parent`): the watchdog is neither told nor started.
    """
    if not argv:
        raise ValueError("argv must not be empty")
    token = new_token()
    if env is None:
        env = (
            os.environ if registry is None or registry.environment is None else registry.environment
        )
    environment = dict(env)
    environment[TOKEN_VARIABLE] = token
    # Shielded: a cancellation must not land between the fork and our holding the handle.
    with anyio.CancelScope(shield=True):
        if registry is not None:
            registry.check_open()
            registry.spawning += 1
        try:
            # Before the fork: our death from here on is seen by the watchdog only after the
            # child exec'd (the child holds the lifeline until then), carrying the token.
            if watched:
                LIFELINE.watch(token, grace)
            process = await anyio.open_process(
                list(argv),
                stdin=stdin,
                stdout=PIPE,
                stderr=stderr,
                cwd=cwd,
                env=environment,
                start_new_session=True,
            )
            # A session leader leads its own group: pgid == pid.
            child = Child(process, ProcessTree(process.pid, token))
            if watched:
                LIFELINE.identify(token, process.pid)
            if registry is not None:
                registry.register(child.tree)
        except BaseException:
            LIFELINE.forget(token)
            raise
        finally:
            if registry is not None:
                registry.spawning -= 1
    try:
        if registry is not None:
            # Shutdown began while we forked: it may not have seen this tree.
            registry.check_open()
        yield child
    finally:
        with anyio.CancelScope(shield=True):
            survivors: list[int] | None = None
            try:
                survivors = await child.settle(
                    grace if registry is None or registry.is_open else 0.0
                )
            finally:
                # Unregistered only once the event loop has its exit status, so that
                # `reap_strays` never takes it.
                await _close(process)
                if registry is not None:
                    registry.unregister(child.tree)
                    registry.reap_strays()
                if survivors == []:
                    # Survivors stay watched: the watchdog tries again if we die.
                    LIFELINE.forget(token)


async def _close(process: Process) -> None:
    """Close our ends of the pipes; wait for the leader only if it is known to have exited
    (a leader that survived the join must not hang us)."""
    if process.returncode is not None:
        await process.aclose()
        return
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await stream.aclose()
