"""The `bash` tool: one shell command through the session's `CommandRunner`, shown on its
tool call while it runs (acp_server/tools/live_output.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import anyio
import msgspec

from acp_server.cancellation import TurnAborted, TurnSignal
from acp_server.process.background import BackgroundClosed, BackgroundItems, TooManyItems
from acp_server.tools.base import ProcessExit, ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.budget import ToolBudget, keep_head_and_tail
from acp_server.tools.builtin._common import BuiltinTool, failed, shorten, str_arg
from acp_server.tools.command_sandbox import CommandPlan, CommandSandbox, Need, refusal_note
from acp_server.tools.live_output import LiveOutput
from acp_server.tools.local_commands import default_shell
from acp_server.tools.workspace import CommandRunner, CommandWatch, PathRoots

BASH_DEFAULT_TIMEOUT = 120.0

_TOO_LONG = (
    "to see all of it, redirect the output to a file and read that with read_file (offset and "
    "limit) or grep"
)


class BashArgs(msgspec.Struct, forbid_unknown_fields=True):
    command: Annotated[str, msgspec.Meta(description="The command line to run.")]
    timeout_ms: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="Kill the command after this many milliseconds (default 120000)."),
    ] = None
    needs: Annotated[
        frozenset[Need] | None,
        msgspec.Meta(
            description=(
                "What the command needs beyond the sandbox of sandboxed mode: `network`, or "
                "`write_outside` (writes outside the workspace: it then runs unsandboxed). The "
                "user is asked first. Omit it otherwise."
            )
        ),
    ] = None
    background: Annotated[
        bool | None,
        msgspec.Meta(
            description=(
                "Start the command in the background and answer at once with its id (`bg_1`): "
                "for servers, watchers and long builds. It runs until it exits, bash_stop stops "
                "it, or the session ends; `timeout_ms` does not apply. Read its output with "
                "bash_output."
            )
        ),
    ] = None


def _seconds(value: float) -> str:
    return f"{value:g} s"


class Bash(BuiltinTool[BashArgs]):
    name = "bash"
    kind: ToolKind = "execute"
    args_type = BashArgs
    description = (
        "Run a shell command (bash -c) in the working directory and return its output (stdout, "
        "then stderr) and exit code. The command runs without a terminal and with no input, so "
        "avoid interactive programs; it is killed, with every process it started, when it "
        "exceeds `timeout_ms` (default 120000 ms) or when the user cancels. Use it to build, "
        "test, run git, and so on; prefer read_file, grep and glob to look at files. In sandboxed "
        "mode it runs in a sandbox: only the workspace (and a private /tmp) is writable and "
        "there is no network; declare `needs` when the command needs more, and the user is "
        "asked first. With `background: true` it keeps running after this call (a dev server, "
        "a watcher)."
    )

    def __init__(
        self,
        path_roots: PathRoots,
        commands: CommandRunner,
        *,
        default_timeout: float = BASH_DEFAULT_TIMEOUT,
        max_bytes: int = ToolBudget().body_bytes,
        command_sandbox: CommandSandbox | None = None,
        background: BackgroundItems | None = None,
    ) -> None:
        super().__init__(path_roots)
        self.commands = commands
        self.command_sandbox = command_sandbox
        self.background = background
        """The session's background items (None: `background: true` is refused)."""
        self.default_timeout = default_timeout
        self.max_bytes = max_bytes

    def title(self, arguments: Mapping[str, Any]) -> str:
        command = str_arg(arguments, "command")
        where = " in the background" if arguments.get("background") is True else ""
        return f"Run `{shorten(command)}`{where}" if command else f"Run command{where}"

    def plan(self, arguments: Mapping[str, Any]) -> CommandPlan:
        """How this call runs: confined or not, with or without the network."""
        needs = arguments.get("needs")
        declared = [n for n in needs if isinstance(n, str)] if isinstance(needs, list) else []
        if self.command_sandbox is None:
            return CommandPlan(confined=False)
        return self.command_sandbox.plan(declared)

    async def act(self, args: BashArgs, call: ToolCallContext, signal: TurnSignal) -> ToolOutput:
        """Run the command, shown on the tool call while it runs."""
        if not args.command.strip():
            return failed("command is empty: give the shell command to run")
        if args.background:
            return await self._start(args, call)
        live = LiveOutput(call)
        aborted: TurnAborted | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(live.show_until_cancelled)
            try:
                output = await self._run(args, live, signal)
            except TurnAborted as exc:
                aborted = exc  # raised below as it is, not inside the group's exception group
            finally:
                tg.cancel_scope.cancel()  # the final result follows; no progress after it
        if aborted is not None:
            raise aborted
        return output

    async def _start(self, args: BashArgs, call: ToolCallContext) -> ToolOutput:
        """Start the command as a background item of the session, always locally (a client's
        terminal is out of our runner's reach), confined as the mode says."""
        if self.background is None:
            return failed("background commands are not available here: run it without it")
        argv = [default_shell(), "-c", args.command]
        plan = self.plan({"needs": sorted(args.needs or ())})
        confined = plan.confined and self.command_sandbox is not None
        if confined and self.command_sandbox is not None:
            argv = self.command_sandbox.confined_argv(argv, plan.network)
        try:
            item = await self.background.start(
                argv,
                command=args.command,
                call_id=call.call_id,
                cwd=self.path_roots.cwd,
            )
        except TooManyItems as exc:
            return failed(f"not started: {exc}; stop one with bash_stop first")
        except BackgroundClosed as exc:
            return failed(f"not started: {exc}")
        except OSError as exc:
            return failed(f"not started: {exc.strerror or exc}")
        return ToolOutput(
            f"Started in the background as {item.name}. It runs until it exits, bash_stop "
            "stops it, or the session ends. Read its output with bash_output; each of your "
            "requests lists it with its new lines while it runs."
        )

    async def _run(self, args: BashArgs, watch: CommandWatch, signal: TurnSignal) -> ToolOutput:
        timeout = args.timeout_ms / 1000 if args.timeout_ms is not None else self.default_timeout
        plan = self.plan({"needs": sorted(args.needs or ())})
        if plan.confined and self.command_sandbox is not None:
            result = await self.command_sandbox.run(
                args.command, plan.network, timeout, signal, watch
            )
        else:
            result = await self.commands.run(
                args.command, self.path_roots.cwd, timeout, signal, watch
            )
        signal.raise_if_aborted()
        output = keep_head_and_tail(result.output.rstrip("\n"), self.max_bytes, _TOO_LONG)
        parts = [output] if result.output.strip() else ["(no output)"]
        if result.truncated:
            parts.append(
                "[the output was longer than what is kept of it while the command runs: its "
                f"beginning is lost; {_TOO_LONG}]"
            )
        if result.timed_out:
            parts.append(f"[timed out after {_seconds(timeout)}; the command was killed]")
        elif result.exit_code is not None:
            parts.append(f"[exit code: {result.exit_code}]")
        elif result.posix_signal is not None:
            parts.append(f"[killed by signal {result.posix_signal}]")
        else:
            parts.append("[exit status unknown]")
        ok = not result.timed_out and result.exit_code == 0
        if not ok and self.command_sandbox is not None:
            note = refusal_note(result.output, plan, self.command_sandbox.writable())
            if note is not None:
                parts.append(note)
        return ToolOutput(
            "\n".join(parts),
            failed=not ok,
            terminal_id=result.terminal_id,
            process_exit=ProcessExit(result.exit_code, result.posix_signal, result.timed_out),
        )
