"""`web_fetch`'s HTML conversion, run where it can be stopped: a child process
(`web_convert_child.py`) started through the one spawner (`acp_server.process.spawn`), its own
process group, registered with the server's registry, stopped and joined however the call
ends.

html-to-markdown is native code that cannot be interrupted: in a worker thread, 2 MiB of
nested `<blockquote>` kept a cancel waiting 5.4 s, and 2 MiB of unclosed ones took the agent
from 50 MB to 1,487 MB (issue 35). In a child:

- **a cancel** (the turn signal) kills the child's group and the call raises `TurnAborted`;
- **time**: the Markdown conversion gets at most `CONVERT_SECONDS`, never past the fetch's
  own deadline (the enclosing scope's); the plain-text pass that follows a failed conversion
  gets the same;
- **memory**: the child's address space is capped (`memory_limit`); past it the converter
  aborts and the page's plain text is taken instead. The agent holds only the page and at
  most `limit` + 1 bytes of what the child writes: reading stops there, and the result says
  the text was cut;
- **an agent killed outright** (SIGKILL): the agent's watchdog
  (`acp_server.process.watchdog`) stops the child when the agent is gone, as it does every command;
  its processor time is capped at the pass's time limit as well (`RLIMIT_CPU`).

See docs/rfc/implemented/feature/2026-12-01-web-fetch.md.
"""

from __future__ import annotations

import contextlib
import math
import signal as posix_signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_server.cancellation import TurnSignal
from acp_server.process import ProcessRegistry, spawn

CHILD = Path(__file__).with_name("web_convert_child.py")
CONVERT_SECONDS = 10.0
"""The longest one conversion pass may take. A 2 MiB documentation page converted in 0.43 s
on the 2 shared cores at load average 3 (the web-fetch RFC)."""
_MiB = 1 << 20
_GRACE = 0.5
"""The child ends at SIGTERM at once (Python's default action); this covers a loaded machine."""
_STDERR_BYTES = 2048


def memory_limit(limit: int) -> int:
    """The child's address-space cap for a page of up to `limit` bytes: 384 MiB for 2 MiB.
    A 2 MiB documentation page peaks at about 140 MiB; hostile ones grow without bound."""
    return 256 * _MiB + 64 * limit


@dataclass(frozen=True)
class Converted:
    text: str
    cut: bool
    """The text was longer than the limit: `text` is its head."""
    instead: str | None
    """Why `text` is the page's plain text rather than Markdown (one sentence), or None."""


class ConversionFailed(Exception):
    """Neither the Markdown nor the plain text of the page could be made (the message says
    why, in words for the model)."""


@dataclass(frozen=True)
class _Pass:
    output: bytes
    cut: bool
    failure: str | None
    """None when the child ended well, else what stopped it."""


class HtmlConverter:
    """Converts web pages in child processes registered with `registry` (the server's; None
    for standalone use). `program` replaces `python -P web_convert_child.py` (tests)."""

    def __init__(
        self, registry: ProcessRegistry | None = None, program: Sequence[str] | None = None
    ) -> None:
        self.registry = registry
        self.program = tuple(program) if program is not None else (sys.executable, "-P", str(CHILD))

    async def convert(self, html: str, *, limit: int, signal: TurnSignal) -> Converted:
        """The Markdown of `html`, or its plain text when the converter fails or runs out of
        time or memory; at most `limit` bytes of UTF-8 either way. Raises `TurnAborted` when
        `signal` aborts (the child is gone by then) and `ConversionFailed` when both fail."""
        data = html.encode("utf-8", errors="replace")
        first = await self._pass("markdown", data, limit, signal)
        if first.failure is None:
            return Converted(_text(first.output, limit), first.cut, None)
        second = await self._pass("text", data, limit, signal)
        if second.failure is not None:
            raise ConversionFailed(
                f"the page could not be converted to Markdown ({first.failure}), nor its "
                f"text taken ({second.failure})"
            )
        instead = f"the page could not be converted to Markdown ({first.failure}); its text follows"
        return Converted(_text(second.output, limit), second.cut, instead)

    async def _pass(self, mode: str, data: bytes, limit: int, signal: TurnSignal) -> _Pass:
        """One run of the child; its output kept up to `limit` + 1 bytes."""
        signal.raise_if_aborted()
        # The enclosing deadline is the fetch's (infinite when there is none).
        seconds = min(CONVERT_SECONDS, anyio.current_effective_deadline() - anyio.current_time())
        memory = memory_limit(limit)
        cpu = max(math.ceil(seconds), 1)
        argv = [*self.program, mode, str(limit), str(memory), str(cpu)]
        output, errors = bytearray(), bytearray()
        cut = False
        async with spawn(
            argv, registry=self.registry, cwd="/", stdin=PIPE, stderr=PIPE, grace=_GRACE
        ) as child:
            process = child.process
            with signal.linked_scope(), anyio.move_on_after(seconds) as timer:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_feed, process.stdin, data)
                    tg.start_soon(_keep_head, process.stderr, errors)
                    if process.stdout is not None:
                        async for chunk in process.stdout:
                            output += chunk[: limit + 1 - len(output)]
                            if len(output) > limit:
                                cut = True  # read no more: leaving the block stops the child
                                break
                    if cut:
                        tg.cancel_scope.cancel()
                    else:
                        await process.wait()
        signal.raise_if_aborted()
        if cut:
            return _Pass(bytes(output), True, None)
        if timer.cancelled_caught:
            return _Pass(b"", False, f"it took longer than {seconds:.3g} s")
        code = process.returncode
        if code == 0:
            return _Pass(bytes(output), False, None)
        return _Pass(b"", False, _failure(code, memory, cpu, errors))


def _failure(code: int | None, memory: int, cpu: int, errors: bytes | bytearray) -> str:
    said = errors.decode("utf-8", errors="replace")
    if "memory allocation of" in said or "MemoryError" in said:
        return f"it needed more than its {memory // _MiB} MiB of memory"
    if code == -posix_signal.SIGXCPU:
        return f"it needed more than its {cpu} s of processor time"
    first = said.strip().partition("\n")[0][:200]
    detail = f": {first}" if first else ""
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"the converter was stopped by {posix_signal.Signals(-code).name}{detail}"
    return f"the converter failed with exit code {code}{detail}"


def _text(output: bytes, limit: int) -> str:
    # The cut may split a character: its bytes are dropped, not replaced.
    return output[:limit].decode("utf-8", errors="ignore")


async def _feed(stream: ByteSendStream | None, data: bytes) -> None:
    if stream is None:
        return
    # A child that ends without reading all of its input (a crash) is not an error here.
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        try:
            await stream.send(data)
        finally:
            await stream.aclose()


async def _keep_head(stream: ByteReceiveStream | None, head: bytearray) -> None:
    if stream is None:
        return
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async for chunk in stream:
            head += chunk[: max(_STDERR_BYTES - len(head), 0)]
