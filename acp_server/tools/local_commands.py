"""`CommandRunner` on the local machine, on top of `acp_server.process.run_process`.

The command runs as `bash -c COMMAND` (`sh -c` where there is no bash) in its own process
group; on a turn abort or a timeout the whole group is stopped and joined before `run`
returns or raises. stdout and stderr come from separate pipes, so their interleaving is lost:
the output is stdout, then stderr after a `stderr:` line.
"""

from __future__ import annotations

import codecs
import shutil
from collections.abc import Callable, Mapping

from acp_server.cancellation import TurnAborted, TurnSignal
from acp_server.process import ProcessRegistry, ProcessResult, run_process
from acp_server.process.background import signal_name
from acp_server.tools.workspace import CommandResult, CommandWatch

OUTPUT_LIMIT = 1 << 20
"""Bytes kept of each of stdout and stderr (the end of the output is kept)."""


def default_shell() -> str:
    """bash if it is installed, else sh."""
    return shutil.which("bash") or shutil.which("sh") or "/bin/sh"


def combine_output(result: ProcessResult) -> str:
    """stdout, then stderr under a `stderr:` marker, then a note on processes that survived."""
    output = result.stdout
    if result.stderr:
        if output and not output.endswith("\n"):
            output += "\n"
        output += "stderr:\n" + result.stderr
    if result.survivors:
        if output and not output.endswith("\n"):
            output += "\n"
        pids = ", ".join(str(pid) for pid in result.survivors)
        output += f"[warning: processes still running after the kill: {pids}]\n"
    return output


class LocalCommands:
    """Runs shell commands as local child processes, registered with `registry` (the
    server's; None only for standalone use, where nothing else needs to stop them)."""

    def __init__(
        self,
        *,
        registry: ProcessRegistry | None = None,
        shell: str | None = None,
        env: Mapping[str, str] | None = None,
        output_limit: int = OUTPUT_LIMIT,
        grace: float = 2.0,
        wrap: Callable[[list[str]], list[str]] | None = None,
    ) -> None:
        self.registry = registry
        self.wrap = wrap
        """Turns the shell's argv into the one started (the command sandbox's bwrap)."""
        self.shell = shell or default_shell()
        self.env = env
        self.output_limit = output_limit
        self.grace = grace

    async def run(
        self,
        command: str,
        cwd: str,
        timeout: float | None,  # noqa: ASYNC109 - a timeout is an outcome here, not an error
        signal: TurnSignal,
        watch: CommandWatch | None = None,
    ) -> CommandResult:
        on_output = None
        if watch is not None:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

            def on_output(chunk: bytes) -> None:
                watch.output(decoder.decode(chunk))

        argv = [self.shell, "-c", command]
        result = await run_process(
            argv if self.wrap is None else self.wrap(argv),
            signal=signal,
            registry=self.registry,
            cwd=cwd,
            env=self.env,
            timeout=timeout,
            output_limit=self.output_limit,
            grace=self.grace,
            on_output=on_output,
        )
        if result.aborted:
            signal.raise_if_aborted()
            raise TurnAborted("aborted")
        return CommandResult(
            output=combine_output(result),
            exit_code=result.exit_code,
            posix_signal=None if result.posix_signal is None else signal_name(result.posix_signal),
            truncated=result.stdout_truncated or result.stderr_truncated,
            timed_out=result.timed_out,
        )
