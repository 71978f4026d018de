"""What every built-in tool shares: argument checking, the path roots, titles, small helpers."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.tools.base import Location, ToolKind, ToolOutput
from acp_server.tools.workspace import PathRefused, PathRoots

A = TypeVar("A", bound=msgspec.Struct)

_AT = re.compile(r"^(?P<text>.*?)(?: - at `\$(?P<where>.*)`)?$", re.DOTALL)


def failed(text: str) -> ToolOutput:
    return ToolOutput(text, failed=True)


def format_validation_error(tool: str, error: msgspec.ValidationError) -> str:
    """A msgspec error rephrased in terms of the tool's arguments."""
    match = _AT.match(str(error))
    text, where = (match["text"], (match["where"] or "").lstrip(".")) if match else (str(error), "")
    if where:
        text = text.replace("Object missing required field", "missing required field")
        return f"Invalid arguments for {tool}: {text} (argument `{where}`)"
    text = text.replace("Object missing required field", "missing required argument")
    text = text.replace("Object contains unknown field", "unknown argument")
    return f"Invalid arguments for {tool}: {text}"


def str_arg(arguments: Mapping[str, Any], key: str) -> str | None:
    """An argument that should be a string, for titles and locations (which never fail)."""
    value = arguments.get(key)
    return value if isinstance(value, str) and value else None


def shorten(text: str, limit: int = 60) -> str:
    """The first line of `text`, cut to `limit` characters."""
    lines = text.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > limit or len(lines) > 1:
        return first[: limit - 1].rstrip() + "…"
    return first


def count_lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def fitting(lines: Sequence[str], max_bytes: int) -> list[str]:
    """The first `lines` whose total size, a line break after each, fits in `max_bytes`."""
    kept: list[str] = []
    size = 0
    for line in lines:
        size += len(line.encode("utf-8", errors="replace")) + 1
        if size > max_bytes:
            break
        kept.append(line)
    return kept


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 line`, `2 lines` (`nouns` for irregular plurals: `1 match`, `2 matches`)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


class BuiltinTool(Generic[A]):
    """Base of the built-in tools: checks the signal, converts the arguments into `args_type`,
    and turns a refused path (outside the workspace, changed under the check, not a regular
    file) into a failed output instead of an exception."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    kind: ToolKind
    args_type: type[A]

    def __init__(self, path_roots: PathRoots) -> None:
        self.path_roots = path_roots

    def title(self, arguments: Mapping[str, Any]) -> str:
        return self.name

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return ()

    async def run(
        self, arguments: Mapping[str, Any], signal: TurnSignal, *extra: Any
    ) -> ToolOutput:
        """Check and convert `arguments`, then `call` (with `extra`, what a tool's own
        `run_call` passes on, such as the bash tool's live output)."""
        signal.raise_if_aborted()
        if not isinstance(arguments, Mapping):
            return failed(f"Invalid arguments for {self.name}: expected a JSON object")
        try:
            args = msgspec.convert(dict(arguments), type=self.args_type)
        except msgspec.ValidationError as exc:
            return failed(format_validation_error(self.name, exc))
        try:
            return await self.call(args, signal, *extra)
        except PathRefused as exc:
            return failed(f"Refused: {exc}")

    async def call(self, args: A, signal: TurnSignal, *extra: Any) -> ToolOutput:
        raise NotImplementedError

    # Paths -------------------------------------------------------------------------------

    def check(self, path: str) -> str:
        """The absolute, resolved path; raises PathRefused (handled by `run`)."""
        return self.path_roots.check(path)

    def display(self, path: str) -> str:
        """`path` as a title shows it: relative to the cwd when it lies below it."""
        joined = path if os.path.isabs(path) else os.path.join(self.path_roots.cwd, path)
        normalised = os.path.normpath(joined)
        cwd = os.path.normpath(self.path_roots.cwd)
        if normalised == cwd:
            return "."
        if normalised.startswith(cwd + os.sep):
            return os.path.relpath(normalised, cwd)
        return path

    def location_of(
        self, arguments: Mapping[str, Any], key: str, default: str | None = None
    ) -> list[Location]:
        path = str_arg(arguments, key) or default
        if path is None:
            return []
        try:
            return [Location(self.path_roots.resolve(path))]
        except PathRefused:
            return []
