"""The test loop: after the model's edits, the agent runs the project's test command and gives
a failure back to the model, for a bounded number of rounds in a turn (as aider's
`--auto-test` does).

It is on for a model whose `auto_test` is set, and by default for a model of a text edit
format (acp_server/agent/edit_formats.py), which has no tool to run commands. The command is
the config file's `[tests] command`, else the one the repository shows
(acp_server/tools/test_command.py). A run is a `bash` call the agent makes itself, in a message
of its own (origin `agent`) that says which command and why: so it goes through the permission
policy (asked for, where the mode asks), the process runner with the turn's signal (a cancel
kills it and ends the turn), the command sandbox in sandboxed mode, the output caps, and the
journal; the client sees it as any other call. The model never reads that call: a failure
reaches it as a user message of its own (origin `context`) holding the end of the output.

At most `max_rounds` runs happen in a turn, each only after an edit since the run before; the
last failing run is not given back to the model (nothing would test its next answer): the turn
ends with a note saying so. See docs/rfc/implemented/feature/2026-12-06-text-edit-formats.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from acp_server.cancellation import TurnSignal
from acp_server.ids import IdFactory
from acp_server.models.base import ModelProvider, ToolCallRequest
from acp_server.models.model_settings import EditFormat
from acp_server.session import records as rec
from acp_server.session.log import SessionLog
from acp_server.tools.base import ProcessExit
from acp_server.tools.test_command import ProjectTestCommand

from .call_checks import RepeatedCalls
from .events import AgentEvent, MessageChunk
from .no_progress import FailedCalls
from .tool_calls import ToolCalls

__all__ = ["FAILURE_CHARS", "TestLoop", "auto_test_of"]

FAILURE_CHARS = 4000
"""The most of a failing run's output the model is given (its end: the summary and the last
failure); what was cut is said."""


class AutoTestConfig(Protocol):
    """What the test runs need of the agent's configuration (`agent.loop.AgentConfig`, read
    structurally: the loop imports this module)."""

    @property
    def model(self) -> ModelProvider: ...
    @property
    def test_command(self) -> Callable[[], ProjectTestCommand | None] | None: ...
    @property
    def max_test_rounds(self) -> int: ...


def auto_test_of(model: object, text_format: bool) -> bool:
    """Whether the tests run after `model`'s edits: its configured `auto_test`, else on for a
    text edit format only."""
    configured = getattr(model, "auto_test", None)
    return configured if isinstance(configured, bool) else text_format


class TestLoop:
    """One agent's test runs, as its config says: the model (`auto_test`), the function that
    finds the project's test command (called at each run: the repository may change), and how
    many runs a turn allows."""

    __test__ = False  # not a pytest class

    def __init__(
        self,
        session: SessionLog,
        calls: ToolCalls,
        emit: Callable[[AgentEvent], Awaitable[None]],
        ids: IdFactory,
        config: AutoTestConfig,
    ) -> None:
        self._session = session
        self._calls = calls
        self._emit = emit
        self._ids = ids
        self._model = config.model
        self._command = config.test_command
        self._rounds = config.max_test_rounds
        self._ran = 0

    def start_turn(self) -> None:
        """A new turn: no run yet, no edit yet."""
        self._ran = 0
        self._calls.edits = 0

    async def after_answer(self, turn_id: str, edit_format: EditFormat, signal: TurnSignal) -> bool:
        """Run the tests if they are on for the model (of `edit_format`), it edited since the
        last run and rounds are left. True when they failed and the model is told so (a
        `context` message): the turn goes on. False when the turn may end: the tests pass, did
        not run, were not due, or failed in the last round."""
        failure = await self._run(turn_id, edit_format, signal)
        signal.raise_if_aborted()
        if failure is None:
            return False
        self._session.recorder.user_message(
            self._ids("msg"), [rec.TextPart(text=failure)], "context", turn_id
        )
        return True

    async def _run(self, turn_id: str, edit_format: EditFormat, signal: TurnSignal) -> str | None:
        """The run, if one is due; what the model is to be told of a failure."""
        if not auto_test_of(self._model, edit_format != "tool_calls"):
            return None
        if self._calls.edits == 0 or self._command is None or self._ran >= self._rounds:
            return None
        found = self._command()
        if found is None:
            return None
        self._ran += 1
        self._calls.edits = 0
        call = ToolCallRequest(
            call_id=self._ids("call"), name="bash", arguments={"command": found.command}
        )
        message_id = self._ids("msg")
        note = (
            f"Running the tests after the edits (run {self._ran} of at most {self._rounds}): "
            f"`{found.command}`, from {found.source}.\n"
        )
        await self._emit(MessageChunk(turn_id, message_id, note, from_agent=True))
        self._session.recorder.assistant_message(
            turn_id, message_id, [rec.TextPart(text=note)], [call], origin="agent"
        )
        # Checks of its own: the agent's runs are no repeats of the model's calls.
        outputs = await self._calls.run(turn_id, [call], signal, RepeatedCalls(), FailedCalls())
        output = outputs.get(call.call_id)
        if output is None or not output.failed or not _exited(output.process_exit):
            return None  # passed, or never ran (refused, denied, timed out): nothing to fix
        if self._ran >= self._rounds:
            await self._say(
                turn_id,
                f"The tests still fail after {self._ran} run(s) of `{found.command}` in this "
                "turn; stopping here. Send a prompt to go on.",
            )
            return None
        text = output.text
        if len(text) > FAILURE_CHARS:
            cut = len(text) - FAILURE_CHARS
            text = f"[the first {cut} characters of the output are cut]\n{text[-FAILURE_CHARS:]}"
        return (
            f"The tests fail after your changes. `{found.command}` printed:\n\n{text}\n\n"
            "Fix the code so that they pass."
        )

    async def _say(self, turn_id: str, text: str) -> None:
        message_id = self._ids("msg")
        await self._emit(MessageChunk(turn_id, message_id, text, from_agent=True))
        self._session.recorder.assistant_message(
            turn_id, message_id, [rec.TextPart(text=text)], origin="agent"
        )


def _exited(ended: ProcessExit | None) -> bool:
    """Whether the run's command ran and exited by itself: from how the `bash` tool says it
    ended, not from its text (notes may follow the exit code there: the sandbox's)."""
    return ended is not None and ended.exit_code is not None and not ended.timed_out
