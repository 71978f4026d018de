"""How the loop tells that the model is not getting anywhere.

- **The same call** (`call_key`): calls are compared after normalization: properties left out
  get their schema `default`, `null` values are dropped, a `path` becomes the file the tool
  would touch (its first location, so `./f.txt`, `f.txt` and `/repo/f.txt` are one file), and a
  `command`'s runs of whitespace become one space.
- **The same result** (`stable_text`): results are compared with their volatile parts masked:
  durations (`0.12s`, `15 ms`), clock times and ISO timestamps, pids, hex addresses and
  pytest's numbered temporary directories. `pytest` printing its run time no longer makes each
  run's output new.
- **The same failure** (`FailedCalls`): consecutive failed calls of one tool with one kind of
  error (`error_kind`: a command's exit status, else the first line of the message with quoted
  text and numbers masked). Any other result breaks the run. From the second such failure the
  result carries a note for the model; at `max_failed_calls` the turn ends with a message.

The notes go to the model inside the tool result; the stop message is the agent's own (shown
to the client, never replayed to the model as its words; see loop.py `_say`), and the last
result says the turn was stopped, so the model knows why in the next turn.

- **A silent end** (`silent_end_message`): when the model ends a turn with no text after its
  tool calls (often right after such a note), the agent says so in its own message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import msgspec

from acp_server.models.base import ToolCallRequest
from acp_server.tools.base import Tool, ToolOutput

from .settings import DEFAULT_MAX_FAILED_CALLS

__all__ = [
    "SILENT_END",
    "FailedCalls",
    "call_key",
    "error_kind",
    "silent_end_message",
    "stable_text",
]

_VOLATILE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"),
        "<time>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ns|us|µs|ms|s|sec|secs|seconds?|m|min|minutes?)\b"), "<dur>"),
    (re.compile(r"\b(pid|PID|process)[ =:#]*\d+"), r"\1 <pid>"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "<addr>"),
    (re.compile(r"pytest-\d+"), "pytest-<n>"),
)
_MARKER = re.compile(r"^\[(exit code: -?\d+|timed out|killed by signal \d+|exit status unknown)")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_NUMBER = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_KIND_CHARS = 120


def stable_text(text: str) -> str:
    """`text` with its volatile parts masked (see the module docstring)."""
    for pattern, mask in _VOLATILE:
        text = pattern.sub(mask, text)
    return text


def call_key(call: ToolCallRequest, tool: Tool | None) -> bytes:
    """What makes two calls the same call (see the module docstring)."""
    arguments = {key: value for key, value in call.arguments.items() if value is not None}
    if tool is not None:
        properties = tool.parameters.get("properties")
        if isinstance(properties, Mapping):
            for name, spec in properties.items():
                if name not in arguments and isinstance(spec, Mapping) and "default" in spec:
                    arguments[name] = spec["default"]
        if isinstance(arguments.get("path"), str):
            try:
                locations = list(tool.locations(arguments))
            except Exception:
                locations = []
            if locations:
                arguments["path"] = locations[0].path
    if isinstance(arguments.get("command"), str):
        arguments["command"] = _SPACES.sub(" ", arguments["command"]).strip()
    return msgspec.json.encode([call.name, arguments, call.arguments_error], order="sorted")


def error_kind(text: str) -> str:
    """The kind of a failure: a command's exit status marker, else the message's first line
    with quoted text and numbers masked."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        marker = _MARKER.match(line)
        if marker is not None:
            return marker[1]
    first = lines[0] if lines else ""
    return _NUMBER.sub("N", _QUOTED.sub("<q>", stable_text(first)))[:_KIND_CHARS]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class FailedCalls:
    """One turn's run of consecutive failures of one tool with one kind of error."""

    def __init__(self, max_failed: int = DEFAULT_MAX_FAILED_CALLS) -> None:
        self.max_failed = max_failed
        self._run: tuple[str, str] | None = None
        self._count = 0
        self.stop_message: str | None = None
        self.noted = False  # a result carried a note since the loop last cleared this

    def check(self, call: ToolCallRequest, output: ToolOutput) -> ToolOutput:
        """`output`, with a note for the model when it continues a run of the same failure."""
        if not output.failed:
            self._run, self._count = None, 0
            return output
        kind = error_kind(output.text)
        if self._run == (call.name, kind):
            self._count += 1
        else:
            self._run, self._count = (call.name, kind), 1
        if self._count < 2:
            return output
        self.noted = True
        if self._count >= self.max_failed and self.stop_message is None:
            self.stop_message = (
                f"Stopped: {call.name} failed {self._count} times in a row in this turn with "
                f"the same kind of error ({kind}). Send a new prompt to continue differently."
            )
            note = (
                f"\n\n[Note from acp-server: this is the {_ordinal(self._count)} {call.name} "
                f"call in a row that failed with the same kind of error ({kind}); the turn was "
                "stopped here.]"
            )
        else:
            note = (
                f"\n\n[Note from acp-server: this is the {_ordinal(self._count)} {call.name} "
                f"call in a row that failed with the same kind of error ({kind}). Small "
                "variations will fail the same way: read the error, look at the code it names, "
                "or try a different approach. After "
                f"{self.max_failed} such failures the turn stops.]"
            )
        return replace(output, text=output.text + note)


SILENT_END = "The model ended its turn without an answer"
"""How `silent_end_message` begins (a subagent's parent reads no such message as its answer)."""


def silent_end_message(noted: bool) -> str:
    """The agent's own message when the model ends a turn with no text after its tool calls: a
    small model told that it is getting nowhere often just stops (Qwen2.5-Coder-1.5B in the e2e
    runs), and a client would otherwise show the calls and then nothing. `noted`: a result of
    the turn's last calls carried a no-progress note."""
    why = (
        " after acp-server noted that its calls were not making progress (see the last result)"
        if noted
        else ""
    )
    return f"{SILENT_END}{why}. Send a new prompt to continue."
