"""Tool execution: the calls of one step, run in order under the turn signal, each announced,
checked, approved, run, capped, recorded and reported; and, at turn end, a result for every call
that never started.

The agent loop (`acp_server/agent/loop.py`) owns the turn and hands each step's calls here. A
cancel is checked before each call, after every seam and after the tool: a call that never
started gets a `not_run` result, one that was running a `cancelled` one, and the abort goes on
up to the loop, which closes the turn. See
docs/rfc/implemented/architecture/2026-11-30-explicit-turn-cancellation.md.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal

from acp_server.cancellation import TurnAborted, TurnSignal
from acp_server.models.base import ToolCallRequest
from acp_server.session.log import SessionLog
from acp_server.session.stopped_calls import ABORTED_CALL_OUTPUT
from acp_server.tools.base import PlanItem, Tool, ToolOutput
from acp_server.tools.budget import cap_output

from .call_checks import RepeatedCalls, call_problem
from .events import AgentEvent, PlanUpdated, ToolCallAnnounced, ToolCallProgress
from .no_progress import FailedCalls
from .seams import Seams

__all__ = ["ToolCalls"]

log = logging.getLogger(__name__)

EventSink = Callable[[AgentEvent], Awaitable[None]]

NOT_RUN_OUTPUT = "not run: the turn ended before this tool call started"
"""The output of the result a call gets when its turn ended before it started."""


class ToolCalls:
    """Runs one agent's tool calls. `tools` is the loop's live by-name table (tools added
    later are found), `seams` its live seams, `emit` its event fan-out."""

    def __init__(
        self,
        session: SessionLog,
        tools: Mapping[str, Tool],
        seams: Seams,
        emit: EventSink,
        max_result_bytes: int,
    ) -> None:
        self._session = session
        self._tools = tools
        self._seams = seams
        self._emit = emit
        self._max_result_bytes = max_result_bytes
        self.drafted: frozenset[str] = frozenset()
        """Calls shown to the client while the model wrote them, this step (set by the loop)."""
        self.edit_blocks: frozenset[str] = frozenset()
        """Calls that apply the model's edit blocks, this step (set by the loop): a block that
        could not be read fails with its own message, not a tool signature."""
        self.edits = 0
        """Calls of kind `edit` that completed (a file written, even as it was), since the
        loop last reset it: the test loop runs the tests after edits."""

    async def run(
        self,
        turn_id: str,
        calls: list[ToolCallRequest],
        signal: TurnSignal,
        repeats: RepeatedCalls,
        failures: FailedCalls,
    ) -> dict[str, ToolOutput]:
        """Run `calls` in order; each one's output (as the model is given it), by call id."""
        outputs: dict[str, ToolOutput] = {}
        for call in calls:
            signal.raise_if_aborted()  # calls not started get balanced results at turn end
            tool = self._tools.get(call.name)
            shown = ToolCallAnnounced(
                turn_id,
                call.call_id,
                call.name,
                tool.title(call.arguments) if tool is not None else call.name,
                tool.kind if tool is not None else "other",
                call.arguments,
                tuple(tool.locations(call.arguments)) if tool is not None else (),
                drafted=call.call_id in self.drafted,
            )
            await self._emit(shown)
            started = False
            problem = call_problem(call, self._tools)
            if call.call_id in self.edit_blocks and call.arguments_error is not None:
                problem = call.arguments_error  # said in the words of the edit format
            try:
                signal.raise_if_aborted()  # a cancel may have arrived while sinks heard of it
                if problem is not None or tool is None:
                    # Told to the model, which may retry; nobody is asked to approve it.
                    output = ToolOutput(problem or f"unknown tool {call.name!r}", failed=True)
                else:
                    for approve in self._seams.approval:
                        denial = await approve(call, signal)
                        signal.raise_if_aborted()
                        if denial is not None:
                            output = ToolOutput(f"denied: {denial.reason}", failed=True)
                            break
                    else:
                        await self._emit(ToolCallProgress(turn_id, call.call_id, "in_progress"))
                        signal.raise_if_aborted()
                        started = True
                        output = await self._run_tool(turn_id, tool, call, signal)
            except TurnAborted:
                # This shape (unset `synthetic` when it started, this output, then the turn's
                # aborted end) is how a replay tells a stopped call: session/stopped_calls.py.
                self._session.recorder.tool_result(
                    shown,
                    ToolOutput(ABORTED_CALL_OUTPUT, failed=True),
                    None if started else "not_run",
                )
                # `cancelled`: the abort stopped it running (it never ran: it failed).
                status: Literal["cancelled", "failed"] = "cancelled" if started else "failed"
                await self._emit(
                    ToolCallProgress(turn_id, call.call_id, status, ABORTED_CALL_OUTPUT)
                )
                raise
            if repeats.stop_message is None and failures.stop_message is None:
                # One stop note at most: the first limit reached ends the turn.
                output = repeats.check(call, output, tool)
                if repeats.stop_message is None:
                    output = failures.check(call, output)
            # A denial's reason (a hook's) or the list of unknown tools is capped too.
            output = cap_output(output, self._max_result_bytes)
            self._session.recorder.tool_result(shown, output)
            outputs[call.call_id] = output
            if not output.failed and shown.kind == "edit" and output.diffs:
                self.edits += 1  # unchanged too: the model meant a change, the tests tell
            if output.plan is not None:
                await self._replace_plan(turn_id, output.plan)
            await self._emit(
                ToolCallProgress(
                    turn_id,
                    call.call_id,
                    "failed" if output.failed else "completed",
                    output.text,
                    diffs=tuple(output.diffs),
                    locations=tuple(output.locations),
                    terminal_id=output.terminal_id,
                    images=tuple(output.images),
                    process_exit=output.process_exit,
                )
            )
        return outputs

    async def _run_tool(
        self, turn_id: str, tool: Tool, call: ToolCallRequest, signal: TurnSignal
    ) -> ToolOutput:
        try:
            context = _CallContext(self._emit, turn_id, call.call_id)
            output = await tool.run(call.arguments, context, signal)
        except TurnAborted:
            raise
        except Exception as exc:
            if _holds_abort(exc):
                # A task group inside the tool re-raises the cancel wrapped in an exception
                # group: that is the turn being cancelled, never a tool failure.
                signal.raise_if_aborted()
                raise TurnAborted("aborted") from None
            log.info("tool %s failed: %s", call.name, exc)
            output = ToolOutput(f"{type(exc).__name__}: {exc}", failed=True)
        signal.raise_if_aborted()  # like every seam: a cancel meanwhile stops the turn here
        output = cap_output(output, self._max_result_bytes)
        for observe in self._seams.post_tool:
            await observe(call, output, signal)
            signal.raise_if_aborted()
        return output

    async def _replace_plan(self, turn_id: str, plan: Sequence[PlanItem]) -> None:
        self._session.recorder.plan(turn_id, plan)
        await self._emit(PlanUpdated(turn_id, tuple(plan)))

    async def close_unstarted(self, turn_id: str) -> None:
        """At turn end: a `not_run` result for every call of the turn that never started, so
        every call in the log is paired with a result."""
        for call in self._session.open_tool_calls(turn_id):
            self._session.recorder.synthetic_result(
                turn_id, call.call_id, "not_run", NOT_RUN_OUTPUT
            )
            if call.call_id in self.drafted:
                # Shown while the model wrote it: the client hears it will not run.
                await self._emit(
                    ToolCallProgress(
                        turn_id,
                        call.call_id,
                        "failed",
                        NOT_RUN_OUTPUT,
                    )
                )


def _holds_abort(exc: BaseException) -> bool:
    """Whether `exc` is, or is an exception group holding, a TurnAborted."""
    if isinstance(exc, TurnAborted):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(_holds_abort(inner) for inner in exc.exceptions)
    return False


class _CallContext:
    """A tool's view of the call it serves: the id, and progress shown on the tool call."""

    def __init__(self, emit: EventSink, turn_id: str, call_id: str) -> None:
        self._emit = emit
        self._turn_id = turn_id
        self.call_id = call_id

    async def progress(self, text: str) -> None:
        await self._emit(ToolCallProgress(self._turn_id, self.call_id, "in_progress", text))

    async def terminal(self, terminal_id: str) -> None:
        await self._emit(
            ToolCallProgress(self._turn_id, self.call_id, "in_progress", terminal_id=terminal_id)
        )
