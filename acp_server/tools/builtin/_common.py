"""What every built-in tool shares: the path roots, titles, small helpers."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.tools.arguments import StructTool
from acp_server.tools.base import Location, ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.workspace import PathRefused, PathRoots

A = TypeVar("A", bound=msgspec.Struct)


def failed(text: str) -> ToolOutput:
    return ToolOutput(text, failed=True)


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


class BuiltinTool(StructTool[A]):
    """Base of the built-in tools: a `StructTool` (arguments decoded into `args_type`, the
    schema generated from it) bound to the session's path roots, which turns a refused path
    (outside the workspace, changed under the check, not a regular file) into a failed output
    instead of an exception."""

    kind: ToolKind

    def __init__(self, path_roots: PathRoots) -> None:
        self.path_roots = path_roots

    def title(self, arguments: Mapping[str, Any]) -> str:
        return self.name

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return ()

    async def run(
        self, arguments: Mapping[str, Any], call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        try:
            return await super().run(arguments, call, signal)
        except PathRefused as exc:
            return failed(f"Refused: {exc}")

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
