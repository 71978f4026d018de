"""Search tools: `glob` (file names) and `grep` (file contents).

Both walk the local disk in a worker thread, so the event loop stays free to deliver a cancel;
the walk checks the turn signal at every directory and file and stops as soon as it aborts.
`.git` directories are skipped and symlinked directories are not followed while recursing;
a result whose real path lies outside the workspace is dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

import anyio.to_thread
import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.tools.base import Location, ToolKind, ToolOutput
from acp_server.tools.builtin._common import BuiltinTool, failed, shorten, str_arg
from acp_server.tools.workspace import Sandbox

GLOB_MAX_RESULTS = 1000
GREP_MAX_MATCHES = 500
GREP_MAX_FILE_BYTES = 10 * 1024 * 1024
GREP_MAX_LINE_CHARS = 400
_BINARY_SNIFF = 8192
_SKIPPED_DIRS = frozenset({".git"})
_MAGIC = re.compile(r"[*?[]")


class _Stopped(Exception):
    """The turn signal aborted while a walk was running in its thread."""


def _stopper(signal: TurnSignal) -> Callable[[], None]:
    def check() -> None:
        if signal.aborted:
            raise _Stopped

    return check


def _scan(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as scan:
            return sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return []


def _is_dir(entry: os.DirEntry[str], *, follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


# glob ----------------------------------------------------------------------------------------


class GlobArgs(msgspec.Struct, forbid_unknown_fields=True):
    pattern: str


def _split_pattern(pattern: str, cwd: str) -> tuple[str, list[str]]:
    """The literal directory a pattern starts from, and its remaining segments."""
    full = pattern if os.path.isabs(pattern) else os.path.join(cwd, pattern)
    segments = full.split(os.sep)
    literal: list[str] = []
    while segments and not _MAGIC.search(segments[0]):
        literal.append(segments.pop(0))
    base = os.sep.join(literal) or os.sep
    return base, segments


def _glob(
    base: str, segments: list[str], contains: Callable[[str], bool], check: Callable[[], None]
) -> list[str]:
    """Sorted paths below `base` matching `segments` whose real path is in the workspace."""
    found: set[str] = set()
    visited: set[tuple[str, int]] = set()

    def walk(directory: str, index: int) -> None:
        if (directory, index) in visited:
            return
        visited.add((directory, index))
        check()
        if index == len(segments):
            found.add(directory)
            return
        head = segments[index]
        last = index + 1 == len(segments)
        if head == "**":
            walk(directory, index + 1)
            for entry in _scan(directory):
                if entry.name not in _SKIPPED_DIRS and _is_dir(entry, follow=False):
                    walk(entry.path, index)
        elif head in ("", "."):
            walk(directory, index + 1)
        elif _MAGIC.search(head):
            for entry in _scan(directory):
                if entry.name in _SKIPPED_DIRS or not fnmatchcase(entry.name, head):
                    continue
                if last:
                    found.add(entry.path)
                elif _is_dir(entry, follow=True):
                    walk(entry.path, index + 1)
        else:
            path = os.path.join(directory, head)
            if last:
                if os.path.lexists(path):
                    found.add(path)
            elif os.path.isdir(path):
                walk(path, index + 1)

    if not segments:
        if os.path.lexists(base):
            found.add(base)
    elif os.path.isdir(base):
        walk(base, 0)
    return sorted(os.path.normpath(path) for path in found if contains(os.path.realpath(path)))


class Glob(BuiltinTool[GlobArgs]):
    name = "glob"
    kind: ToolKind = "search"
    args_type = GlobArgs
    description = (
        "Find files and directories whose paths match a glob pattern, relative to the working "
        "directory (or an absolute pattern inside the workspace). `*` and `?` match within one "
        "path segment, `[abc]` matches one character of a set, and `**` matches any number of "
        "directories, e.g. `src/**/*.py`. Results are absolute paths, sorted; `.git` is skipped; "
        "at most 1000 are shown."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "The glob pattern, e.g. `**/*.py` or `src/*/test_*.py`.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, sandbox: Sandbox, *, max_results: int = GLOB_MAX_RESULTS) -> None:
        super().__init__(sandbox)
        self.max_results = max_results

    def title(self, arguments: Mapping[str, Any]) -> str:
        pattern = str_arg(arguments, "pattern")
        return f"Find `{shorten(pattern)}`" if pattern else "Find files"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        pattern = str_arg(arguments, "pattern")
        if pattern is None:
            return []
        base, _ = _split_pattern(pattern, self.sandbox.cwd)
        return [Location(self.sandbox.resolve(base))]

    async def call(self, args: GlobArgs, signal: TurnSignal) -> ToolOutput:
        if not args.pattern.strip():
            return failed("pattern is empty: give a glob pattern such as `**/*.py`")
        base, segments = _split_pattern(args.pattern, self.sandbox.cwd)
        root = self.check(base)
        try:
            results = await anyio.to_thread.run_sync(
                _glob, root, segments, self.sandbox.contains, _stopper(signal)
            )
        except _Stopped:
            signal.raise_if_aborted()
            raise
        signal.raise_if_aborted()
        if not results:
            return ToolOutput(f"No paths match `{args.pattern}`", locations=[Location(root)])
        shown = results[: self.max_results]
        text = "\n".join(shown)
        if len(results) > len(shown):
            text += (
                f"\n[{len(results) - len(shown)} more matches not shown; use a narrower pattern]"
            )
        return ToolOutput(text, locations=[Location(root)])


# grep ----------------------------------------------------------------------------------------


class GrepArgs(msgspec.Struct, forbid_unknown_fields=True):
    pattern: str
    path: str | None = None


class _GrepReport(msgspec.Struct):
    lines: list[str]
    files: int = 0
    skipped_large: int = 0
    capped: bool = False


def _files_under(root: str, check: Callable[[], None]) -> Iterator[str]:
    """Regular files under `root`, in sorted order, without entering `.git` or following
    symlinked directories."""
    if not os.path.isdir(root):
        yield root
        return
    stack = [root]
    while stack:
        check()
        directory = stack.pop()
        subdirs: list[str] = []
        for entry in _scan(directory):
            if _is_dir(entry, follow=False):
                if entry.name not in _SKIPPED_DIRS:
                    subdirs.append(entry.path)
            else:
                yield entry.path
        stack.extend(reversed(subdirs))


def _grep(
    regex: re.Pattern[str],
    root: str,
    contains: Callable[[str], bool],
    check: Callable[[], None],
    max_matches: int,
) -> _GrepReport:
    report = _GrepReport(lines=[])
    for path in _files_under(root, check):
        check()
        real = os.path.realpath(path)
        if not contains(real) or not os.path.isfile(real):
            continue
        try:
            if os.path.getsize(real) > GREP_MAX_FILE_BYTES:
                report.skipped_large += 1
                continue
            with open(real, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if b"\0" in data[:_BINARY_SNIFF]:
            continue
        report.files += 1
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.split("\n"), start=1):
            if number % 10000 == 0:
                check()
            if regex.search(line) is None:
                continue
            line = line.rstrip("\r")
            if len(line) > GREP_MAX_LINE_CHARS:
                line = line[:GREP_MAX_LINE_CHARS] + "…"
            report.lines.append(f"{path}:{number}: {line}")
            if len(report.lines) >= max_matches:
                report.capped = True
                return report
    return report


class Grep(BuiltinTool[GrepArgs]):
    name = "grep"
    kind: ToolKind = "search"
    args_type = GrepArgs
    description = (
        "Search the contents of text files for a Python regular expression (`re.search`, line "
        "by line). `path` is a file or a directory searched recursively (default: the working "
        "directory); binary files and `.git` are skipped. Each match is printed as "
        "`path:line: text` with an absolute path; at most 500 matches are shown. Use `(?i)` for "
        "a case-insensitive search and escape regex metacharacters to find literal text."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "A Python regular expression."},
            "path": {
                "type": "string",
                "description": "File or directory to search (default: the working directory).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, sandbox: Sandbox, *, max_matches: int = GREP_MAX_MATCHES) -> None:
        super().__init__(sandbox)
        self.max_matches = max_matches

    def title(self, arguments: Mapping[str, Any]) -> str:
        pattern = str_arg(arguments, "pattern")
        title = f"Search `{shorten(pattern)}`" if pattern else "Search"
        path = str_arg(arguments, "path")
        return f"{title} in {self.display(path)}" if path else title

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return self.location_of(arguments, "path", self.sandbox.cwd)

    async def call(self, args: GrepArgs, signal: TurnSignal) -> ToolOutput:
        try:
            regex = re.compile(args.pattern)
        except re.error as exc:
            return failed(f"Invalid regular expression {args.pattern!r}: {exc}")
        root = self.check(args.path or self.sandbox.cwd)
        if not await anyio.to_thread.run_sync(os.path.exists, root):
            return failed(f"Path not found: {root}")
        where = [Location(root)]
        try:
            report = await anyio.to_thread.run_sync(
                _grep, regex, root, self.sandbox.contains, _stopper(signal), self.max_matches
            )
        except _Stopped:
            signal.raise_if_aborted()
            raise
        signal.raise_if_aborted()
        notes: list[str] = []
        if report.capped:
            notes.append(f"stopped after {self.max_matches} matches; narrow the pattern or path")
        if report.skipped_large:
            notes.append(
                f"{report.skipped_large} file(s) over {GREP_MAX_FILE_BYTES // (1024 * 1024)} MiB "
                "skipped"
            )
        if not report.lines:
            text = f"No matches for `{args.pattern}` in {report.files} file(s) under {root}"
        else:
            text = "\n".join(report.lines)
        if notes:
            text += "\n[" + "; ".join(notes) + "]"
        return ToolOutput(text, locations=where)
