"""The scripted model (`--model script:PATH`) and its shorthand `--model echo`.

A deterministic provider for tests, fixtures, benchmarks and demos; the file format is the
stable "Scripted model" section of ARCHITECTURE.md. The file is read and fully validated at
load time so a bad script fails at start-up, naming the path, the response and the event.
At stream time each request of a session takes that session's next response (cycling), and
every event becomes exactly one stream event: chunks are never merged or split.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from acp_server.cancellation import TurnSignal
from acp_server.models.base import (
    AssistantMessage,
    ConversationItem,
    Finish,
    FinishReason,
    ModelConfigError,
    ModelError,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    TextDelta,
    TextPart,
    ThoughtDelta,
    ToolCallEvent,
    ToolCallRequest,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from acp_server.models.window import ContextWindow

SCRIPTED_CONTEXT_WINDOW = ContextWindow(100_000, "default", "the scripted model")
"""The context size the scripted model claims (it has none); lets `usage_update` be tested."""

__all__ = ["ScriptedProvider", "echo_chunks", "echo_provider", "load_script"]

# --- the file as written --------------------------------------------------------------------


class _RawToolCall(Struct, forbid_unknown_fields=True):
    name: str
    arguments: dict[str, Any] = {}


class _RawEvent(Struct, forbid_unknown_fields=True):
    """Every key an event may carry; which combinations are valid is checked afterwards."""

    text: str | UnsetType = UNSET
    thought: str | UnsetType = UNSET
    repeat: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    delay_ms: Annotated[float, Meta(ge=0)] | UnsetType = UNSET
    echo: bool | UnsetType = UNSET
    tool_call: _RawToolCall | UnsetType = UNSET
    finish: Literal["max_tokens", "refusal"] | UnsetType = UNSET
    error: str | UnsetType = UNSET


class _RawScript(Struct, forbid_unknown_fields=True):
    responses: list[list[_RawEvent]]


class _RawFile(Struct, forbid_unknown_fields=True):
    responses: list[list[_RawEvent]]
    subagent: _RawScript | UnsetType = UNSET


# --- validated steps ------------------------------------------------------------------------


class _Text(Struct, frozen=True):
    event: TextDelta
    repeat: int
    delay_s: float
    words: int


class _Thought(Struct, frozen=True):
    event: ThoughtDelta
    words: int


class _Delay(Struct, frozen=True):
    seconds: float


class _Echo(Struct, frozen=True):
    pass


class _ToolCall(Struct, frozen=True):
    name: str
    arguments_json: bytes  # decoded afresh per call so no consumer shares a mutable dict
    words: int


class _Finish(Struct, frozen=True):
    reason: FinishReason


class _Error(Struct, frozen=True):
    message: str


_Step = _Text | _Thought | _Delay | _Echo | _ToolCall | _Finish | _Error
_Response = tuple[_Step, ...]

_KINDS = ("text", "thought", "echo", "tool_call", "finish", "error")


def _step(raw: _RawEvent) -> _Step:
    """Turn one decoded event into a step; raises ValueError naming the problem."""
    kinds = [kind for kind in _KINDS if getattr(raw, kind) is not UNSET]
    if len(kinds) > 1:
        raise ValueError(f"an event has one kind, got {' and '.join(kinds)}")
    if not isinstance(raw.text, UnsetType):
        repeat = 1 if isinstance(raw.repeat, UnsetType) else raw.repeat
        delay_ms = 0.0 if isinstance(raw.delay_ms, UnsetType) else raw.delay_ms
        return _Text(TextDelta(text=raw.text), repeat, delay_ms / 1000, len(raw.text.split()))
    if not isinstance(raw.repeat, UnsetType):
        raise ValueError("`repeat` only goes with `text`")
    if not kinds:
        if isinstance(raw.delay_ms, UnsetType):
            raise ValueError(f"empty event; expected one of {', '.join((*_KINDS, 'delay_ms'))}")
        return _Delay(raw.delay_ms / 1000)
    if not isinstance(raw.delay_ms, UnsetType):
        raise ValueError("`delay_ms` goes alone or with `text`")
    if not isinstance(raw.thought, UnsetType):
        return _Thought(ThoughtDelta(text=raw.thought), len(raw.thought.split()))
    if not isinstance(raw.echo, UnsetType):
        if not raw.echo:
            raise ValueError("`echo` must be true")
        return _Echo()
    if not isinstance(raw.tool_call, UnsetType):
        arguments = msgspec.json.encode(raw.tool_call.arguments)
        return _ToolCall(raw.tool_call.name, arguments, 1 + len(arguments.split()))
    if not isinstance(raw.finish, UnsetType):
        return _Finish(raw.finish)
    assert not isinstance(raw.error, UnsetType)
    return _Error(raw.error)


def _responses(raw: list[list[_RawEvent]], where: str) -> tuple[_Response, ...]:
    """Validate one list of responses; `where` prefixes messages ("" or "subagent ")."""
    if not raw:
        raise ModelConfigError(f"{where}`responses` is empty; a script needs at least one")
    responses: list[_Response] = []
    for i, response in enumerate(raw):
        steps: list[_Step] = []
        for j, event in enumerate(response):
            try:
                steps.append(_step(event))
            except ValueError as exc:
                raise ModelConfigError(f"{where}response {i}, event {j}: {exc}") from None
        responses.append(tuple(steps))
    return tuple(responses)


_EVENT_PATH = re.compile(r"`\$(\.subagent)?\.responses\[(\d+)\]\[(\d+)\]")


def _locate(message: str) -> str:
    """Prefix a msgspec validation message with the response and event it points at."""
    match = _EVENT_PATH.search(message)
    if match is None:
        return message
    where = "subagent " if match[1] else ""
    return f"{where}response {match[2]}, event {match[3]}: {message}"


def _parse(data: bytes) -> tuple[tuple[_Response, ...], tuple[_Response, ...] | None]:
    """Decode and validate a script; raises ModelConfigError without the path."""
    try:
        raw = msgspec.json.decode(data, type=_RawFile)
    except msgspec.ValidationError as exc:
        raise ModelConfigError(_locate(str(exc))) from None
    except msgspec.DecodeError as exc:
        raise ModelConfigError(f"invalid JSON: {exc}") from None
    responses = _responses(raw.responses, "")
    if isinstance(raw.subagent, UnsetType):
        return responses, None
    return responses, _responses(raw.subagent.responses, "subagent ")


def load_script(path: str) -> ScriptedProvider:
    """Read and validate the script at `path` (`~` expanded); named `script:PATH`.

    Raises ModelConfigError naming the path and the problem (unreadable file, invalid JSON,
    or the response and event index of a bad event, with msgspec's `$...` path).
    """
    try:
        data = Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise ModelConfigError(f"model script {path}: cannot read: {exc.strerror}") from None
    try:
        responses, subagent = _parse(data)
    except ModelConfigError as exc:
        raise ModelConfigError(f"model script {path}: {exc}") from None
    return ScriptedProvider(f"script:{path}", responses, subagent)


def echo_provider() -> ScriptedProvider:
    """`--model echo`: a script whose only response is `[{"echo": true}]`."""
    return ScriptedProvider("echo", ((_Echo(),),), None)


# --- streaming ------------------------------------------------------------------------------

_WORD_CHUNK = re.compile(r"\s*\S+\s*|\s+")
_CALL_ID = re.compile(r"call_(\d+)")


def echo_chunks(text: str) -> list[str]:
    """Split `text` into one chunk per word (trailing whitespace kept with its word, leading
    whitespace with the first); `"".join(echo_chunks(t)) == t` for every `t`."""
    return _WORD_CHUNK.findall(text)


def _last_user_text(messages: Sequence[ConversationItem]) -> str:
    for item in reversed(messages):
        if isinstance(item, UserMessage):
            return "\n".join(part.text for part in item.parts if isinstance(part, TextPart))
    return ""


def _item_words(item: ConversationItem) -> int:
    if isinstance(item, UserMessage):
        return sum(len(p.text.split()) for p in item.parts if isinstance(p, TextPart))
    if isinstance(item, AssistantMessage):
        return len(item.text.split()) + len(item.tool_calls)
    return len(item.output.split())


def _highest_call_number(messages: Sequence[ConversationItem]) -> int:
    """The largest n of a `call_<n>` id already in the conversation (0 if none), so ids stay
    unique within a session that was reloaded into a fresh process."""
    highest = 0
    for item in messages:
        ids: list[str] = []
        if isinstance(item, AssistantMessage):
            ids = [call.call_id for call in item.tool_calls]
        elif isinstance(item, ToolResultMessage):
            ids = [item.call_id]
        for call_id in ids:
            match = _CALL_ID.fullmatch(call_id)
            if match is not None:
                highest = max(highest, int(match[1]))
    return highest


async def _pause(seconds: float, signal: TurnSignal) -> None:
    """Sleep, interrupted at once when the signal aborts (then raises TurnAborted)."""
    with signal.linked_scope():
        await anyio.sleep(seconds)
    signal.raise_if_aborted()


class ScriptedProvider:
    """Plays a script: per session, each request takes the next response, cycling.

    Cursors and tool-call counters are keyed by `request.session_id`. Build one with
    `load_script` / `echo_provider` (or `acp_server.models.spec.load_model`).
    """

    __slots__ = (
        "_call_counters",
        "_counted",
        "_cursors",
        "_responses",
        "_subagent",
        "_subagent_responses",
        "name",
    )

    def __init__(
        self,
        name: str,
        responses: tuple[_Response, ...],
        subagent_responses: tuple[_Response, ...] | None,
    ) -> None:
        self.name = name
        self._responses = responses
        self._subagent_responses = subagent_responses
        self._cursors: dict[str, int] = {}
        self._call_counters: dict[str, int] = {}
        self._counted: dict[str, tuple[list[ConversationItem], int]] = {}
        self._subagent: ScriptedProvider | None = None

    def for_subagent(self) -> ModelProvider:
        """The provider for subagents' child sessions: the file's `subagent.responses` when
        present, else the same responses, with its own cursors. Always the same object, so a
        child session keeps its cursor; nested subagents share it (their session ids differ)."""
        if self._subagent is None:
            if self._subagent_responses is None:
                self._subagent = ScriptedProvider(self.name, self._responses, None)
            else:
                self._subagent = ScriptedProvider(self.name, self._subagent_responses, None)
            self._subagent._subagent = self._subagent
        return self._subagent

    async def context_window(self, signal: TurnSignal) -> ContextWindow:
        """`SCRIPTED_CONTEXT_WINDOW`: a script has no real window."""
        return SCRIPTED_CONTEXT_WINDOW

    def _next_call_id(self, request: ModelRequest) -> str:
        session = request.session_id
        counter = self._call_counters.get(session)
        if counter is None:
            counter = _highest_call_number(request.messages)
        counter += 1
        self._call_counters[session] = counter
        return f"call_{counter}"

    def _input_words(self, request: ModelRequest) -> int:
        """Words of the request. Only items after the part already counted for the session
        are split: a conversation grows by appending, and recounting it all at every step
        would make a long session's steps slower and slower. The prefix is compared with
        `==` (identity first, then content), so a rewritten history is recounted."""
        messages = request.messages
        counted = self._counted.get(request.session_id)
        words, start = 0, 0
        if counted is not None:
            seen, seen_words = counted
            if len(seen) <= len(messages) and messages[: len(seen)] == seen:
                words, start = seen_words, len(seen)
        words += sum(_item_words(item) for item in messages[start:])
        self._counted[request.session_id] = (list(messages), words)
        return words + len(request.system_prompt.split())

    async def stream(
        self, request: ModelRequest, signal: TurnSignal
    ) -> AsyncGenerator[ModelEvent, None]:
        """Play the session's next response; see the module and ARCHITECTURE.md."""
        signal.raise_if_aborted()
        session = request.session_id
        cursor = self._cursors.get(session, 0)
        self._cursors[session] = (cursor + 1) % len(self._responses)

        output_words = 0
        called_tools = False
        finish: FinishReason | None = None
        for step in self._responses[cursor]:
            signal.raise_if_aborted()
            if isinstance(step, _Text):
                event = step.event
                if step.delay_s > 0:
                    for _ in range(step.repeat):
                        await _pause(step.delay_s, signal)
                        yield event
                else:
                    for _ in range(step.repeat):
                        signal.raise_if_aborted()
                        yield event
                output_words += step.words * step.repeat
            elif isinstance(step, _Thought):
                yield step.event
                output_words += step.words
            elif isinstance(step, _Delay):
                await _pause(step.seconds, signal)
            elif isinstance(step, _Echo):
                for chunk in echo_chunks(_last_user_text(request.messages)):
                    signal.raise_if_aborted()
                    yield TextDelta(text=chunk)
                    output_words += len(chunk.split())
            elif isinstance(step, _ToolCall):
                call = ToolCallRequest(
                    call_id=self._next_call_id(request),
                    name=step.name,
                    arguments=msgspec.json.decode(step.arguments_json),
                )
                yield ToolCallEvent(call=call)
                called_tools = True
                output_words += step.words
            elif isinstance(step, _Finish):
                finish = step.reason
                break
            else:
                raise ModelError(step.message)

        signal.raise_if_aborted()
        yield Usage(input_tokens=self._input_words(request), output_tokens=output_words)
        signal.raise_if_aborted()
        if finish is None:
            finish = "tool_calls" if called_tools else "stop"
        yield Finish(reason=finish)
