"""Typed wrappers for the requests the agent sends the client: permission, fs/*, terminal/*,
elicitation/create (the `ask_user` tool).

Each waits inside the turn signal's linked scope: when the turn is cancelled the wait stops at
once, the peer sends `$/cancel_request` for the abandoned request, and the caller raises
`TurnAborted`. Terminals are always killed (on cancel or timeout) and released.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, TypeVar

import anyio
import msgspec
from msgspec import UNSET

from acp_protocol import errors
from acp_protocol import methods as m
from acp_protocol.client import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from acp_protocol.content import TextContent
from acp_protocol.elicitation import (
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationSchema,
)
from acp_protocol.initialize import (
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
)
from acp_protocol.tool_call import ContentToolCallContent, ToolCallUpdateFields
from acp_server.cancellation import TurnAborted, TurnSignal
from acp_server.printable import one_line, printable
from acp_server.rpc.errors import MalformedAnswer, PeerClosed, RemoteError
from acp_server.rpc.peer import Peer
from acp_server.tools.permissions import Answer
from acp_server.tools.toolbox import (
    AskFailed,
    CommandResult,
    CommandWatch,
    FormAnswer,
    TextWindow,
    window_of_text,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

PERMISSION_OPTIONS = [
    # The safe choice first: some clients pick the first option automatically.
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
]
ANSWERS: dict[str, Answer] = {o.option_id: o.kind for o in PERMISSION_OPTIONS}
"""The answer each option stands for (any other option id is a rejection)."""

TERMINAL_OUTPUT_LIMIT = 1 << 20


async def ask_within(
    peer: Peer, method: str, params: object, result: type[T], signal: TurnSignal
) -> T:
    """Send a request and wait for its answer while the turn runs: a cancel of the turn stops
    the wait at once (the peer withdraws the request) and raises `TurnAborted`."""
    with signal.linked_scope():
        return await peer.request(method, params, result)
    signal.raise_if_aborted()
    raise TurnAborted(method)  # unreachable: the scope only ends early on an abort


class AcpPermissionAsker:
    """Asks through `session/request_permission` about an already announced tool call.

    The title is cut to a line (the tool's own title) and escaped (`one_line`). What the user
    decides on is whole: the request carries the call's input (`rawInput`, from `announced`,
    the inputs of the calls the session announced) and, for a command, the whole command as
    text with its control characters shown (`printable`).
    """

    def __init__(
        self, peer: Peer, session_id: str, announced: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        self._peer = peer
        self._session_id = session_id
        self._announced = announced if announced is not None else {}

    async def ask(self, call_id: str, title: str, reason: str, signal: TurnSignal) -> Answer:
        arguments = self._announced.get(call_id)
        command = arguments.get("command") if arguments is not None else None
        fields = ToolCallUpdateFields(
            tool_call_id=call_id,
            title=one_line(title),
            raw_input=dict(arguments) if arguments is not None else UNSET,
            content=(
                [ContentToolCallContent(content=TextContent(text=printable(command)))]
                if isinstance(command, str)
                else UNSET
            ),
        )
        request = RequestPermissionRequest(
            session_id=self._session_id, tool_call=fields, options=PERMISSION_OPTIONS
        )
        try:
            response = await ask_within(
                self._peer, m.SESSION_REQUEST_PERMISSION, request, RequestPermissionResponse, signal
            )
        except (PeerClosed, RemoteError) as exc:
            log.info("permission request for %s got no answer: %s", call_id, exc)
            return "cancelled"
        except MalformedAnswer as exc:
            # Not a yes: a client that cannot say what it chose has not allowed anything.
            log.warning("permission request for %s: %s; counted as a rejection", call_id, exc)
            return "reject_once"
        outcome = response.outcome
        if isinstance(outcome, SelectedPermissionOutcome):
            return ANSWERS.get(outcome.option_id, "reject_once")
        return "cancelled"


class ClientFiles:
    """`FileAccess` through the client's `fs/*` methods (sees unsaved editor buffers)."""

    def __init__(self, peer: Peer, session_id: str) -> None:
        self._peer = peer
        self._session_id = session_id

    async def read_text(self, path: str, signal: TurnSignal) -> str:
        request = ReadTextFileRequest(session_id=self._session_id, path=path)
        try:
            response = await ask_within(
                self._peer, m.FS_READ_TEXT_FILE, request, ReadTextFileResponse, signal
            )
        except RemoteError as exc:
            if exc.code == errors.RESOURCE_NOT_FOUND:
                raise FileNotFoundError(path) from None
            raise OSError(f"the client could not read {path}: {exc.message}") from None
        return response.content

    async def read_window(
        self, path: str, start: int, max_lines: int, max_bytes: int, signal: TurnSignal
    ) -> TextWindow:
        # The whole text: clients differ in honouring `line`/`limit`, and the frame that
        # carries it is already bounded by the line limit of the connection.
        return window_of_text(await self.read_text(path, signal), start, max_lines, max_bytes)

    async def write_text(self, path: str, content: str, signal: TurnSignal) -> None:
        request = WriteTextFileRequest(session_id=self._session_id, path=path, content=content)
        try:
            await ask_within(
                self._peer,
                m.FS_WRITE_TEXT_FILE,
                request,
                WriteTextFileResponse | None,  # type: ignore[arg-type]
                signal,
            )
        except RemoteError as exc:
            raise OSError(f"the client could not write {path}: {exc.message}") from None


class ClientTerminals:
    """`CommandRunner` through the client's terminals: create, wait, output, release."""

    def __init__(self, peer: Peer, session_id: str) -> None:
        self._peer = peer
        self._session_id = session_id

    async def run(
        self,
        command: str,
        cwd: str,
        timeout: float | None,  # noqa: ASYNC109 - expiry kills the terminal and is reported
        signal: TurnSignal,
        watch: CommandWatch | None = None,
    ) -> CommandResult:
        created = await ask_within(
            self._peer,
            m.TERMINAL_CREATE,
            CreateTerminalRequest(
                session_id=self._session_id,
                command="sh",
                args=["-c", command],
                cwd=cwd,
                output_byte_limit=TERMINAL_OUTPUT_LIMIT,
            ),
            CreateTerminalResponse,
            signal,
        )
        terminal = created.terminal_id
        exited: WaitForTerminalExitResponse | None = None
        timed_out = False
        try:
            if watch is not None:
                await watch.terminal(terminal)  # embedded now: the editor shows it live
            with signal.linked_scope(), anyio.move_on_after(timeout) as deadline:
                exited = await self._call(
                    m.TERMINAL_WAIT_FOR_EXIT,
                    WaitForTerminalExitRequest,
                    terminal,
                    WaitForTerminalExitResponse,
                )
            timed_out = deadline.cancelled_caught and not signal.aborted
            with anyio.CancelScope(shield=True):
                if exited is None:
                    await self._call(
                        m.TERMINAL_KILL, KillTerminalRequest, terminal, KillTerminalResponse
                    )
                output = await self._call(
                    m.TERMINAL_OUTPUT, TerminalOutputRequest, terminal, TerminalOutputResponse
                )
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await self._call(
                        m.TERMINAL_RELEASE,
                        ReleaseTerminalRequest,
                        terminal,
                        ReleaseTerminalResponse,
                    )
                except (RemoteError, PeerClosed) as exc:
                    log.info("releasing terminal %s failed: %s", terminal, exc)
        signal.raise_if_aborted()
        status = exited if exited is not None else output.exit_status
        exit_code = getattr(status, "exit_code", None)
        killed_by = getattr(status, "signal", None)
        return CommandResult(
            output=output.output,
            exit_code=None if exit_code is UNSET else exit_code,
            posix_signal=None if killed_by is UNSET else killed_by,
            truncated=output.truncated,
            timed_out=timed_out,
            terminal_id=terminal,
        )

    async def _call(self, method: str, request_type: type, terminal: str, result: type[T]) -> T:
        request = request_type(session_id=self._session_id, terminal_id=terminal)
        return await self._peer.request(method, request, result, timeout=10.0)


class AcpFormAsker:
    """The `ask_user` tool's questions as `elicitation/create` (form mode) scoped to the
    session and the tool call. A turn cancel while the question is open stops the wait at once
    and withdraws the request with `$/cancel_request` (`ask_within`)."""

    def __init__(self, peer: Peer, session_id: str) -> None:
        self._peer = peer
        self._session_id = session_id

    async def ask(
        self, message: str, form: Mapping[str, Any], call_id: str, signal: TurnSignal
    ) -> FormAnswer:
        try:
            schema = msgspec.convert(dict(form), type=ElicitationSchema)
        except msgspec.ValidationError as exc:
            raise AskFailed(f"the form is not one ACP allows: {exc}") from None
        if not schema.properties:
            raise AskFailed("the form has no fields")
        params = CreateElicitationRequest(
            message=message,
            mode="form",
            requested_schema=schema,
            session_id=self._session_id,
            tool_call_id=call_id,
        )
        try:
            answer = await ask_within(
                self._peer, m.ELICITATION_CREATE, params, CreateElicitationResponse, signal
            )
        except (RemoteError, MalformedAnswer, PeerClosed) as exc:
            raise AskFailed(f"the client could not ask the user: {exc}") from None
        if answer.action == "accept":
            content = answer.content if isinstance(answer.content, dict) else {}
            return FormAnswer("accept", content)
        if answer.action == "decline":
            return FormAnswer("decline")
        return FormAnswer("cancel")  # "cancel", or an action this build does not know


def asks_forms(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised form elicitation (`elicitation.form`): then the session
    offers the `ask_user` tool."""
    elicitation = capabilities.elicitation
    return isinstance(elicitation, ElicitationCapabilities) and isinstance(
        elicitation.form, ElicitationFormCapabilities
    )
