"""Search tools: `glob` (file names) and `grep` (file contents).

Both walk the local disk in a worker thread, so the event loop stays free to deliver a cancel;
the walk checks the turn signal at every directory and file and stops as soon as it aborts.
`.git` directories are skipped and symlinked directories are not followed while recursing;
a result whose real path lies outside the workspace is dropped, and grep opens each file with
the same link-refusing open as the file tools (`local_files.open_checked`). Both cap what they
show and say how many there were in all.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

import anyio.to_thread
import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.tools.base import Location, ToolKind, ToolOutput
from acp_server.tools.budget import ToolBudget
from acp_server.tools.builtin._common import (
    BuiltinTool,
    failed,
    fitting,
    plural,
    shorten,
    str_arg,
)
from acp_server.tools.local_files import CHUNK_BYTES, Stopped, open_checked, stopper
from acp_server.tools.workspace import PathRefused, Sandbox

_DEFAULT = ToolBudget()
GREP_MAX_FILE_BYTES = 10 * 1024 * 1024
GREP_MAX_LINE_CHARS = 400
_BINARY_SNIFF = 8192
_SKIPPED_DIRS = frozenset({".git"})
_MAGIC = re.compile(r"[*?[]")


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
    return sorted(os.path.normpath(path) for path in found if _inside(path, contains))


def _inside(path: str, contains: Callable[[str], bool]) -> bool:
    try:
        return contains(os.path.realpath(path))
    except OSError:
        return False  # it changed while being resolved


class Glob(BuiltinTool[GlobArgs]):
    name = "glob"
    kind: ToolKind = "search"
    args_type = GlobArgs
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

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        max_results: int = _DEFAULT.max_search_results,
        max_bytes: int = _DEFAULT.body_bytes,
    ) -> None:
        super().__init__(sandbox)
        self.max_results = max_results
        self.max_bytes = max_bytes
        self.description = (
            "Find files and directories whose paths match a glob pattern, relative to the "
            "working directory (or an absolute pattern inside the workspace). `*` and `?` match "
            "within one path segment, `[abc]` matches one character of a set, and `**` matches "
            "any number of directories, e.g. `src/**/*.py`. Results are absolute paths, "
            f"sorted; `.git` is skipped; at most {max_results} are shown, with the total."
        )

    def title(self, arguments: Mapping[str, Any]) -> str:
        pattern = str_arg(arguments, "pattern")
        return f"Find `{shorten(pattern)}`" if pattern else "Find files"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        pattern = str_arg(arguments, "pattern")
        if pattern is None:
            return []
        base, _ = _split_pattern(pattern, self.sandbox.cwd)
        try:
            return [Location(self.sandbox.resolve(base))]
        except PathRefused:
            return []

    async def call(self, args: GlobArgs, signal: TurnSignal) -> ToolOutput:
        if not args.pattern.strip():
            return failed("pattern is empty: give a glob pattern such as `**/*.py`")
        base, segments = _split_pattern(args.pattern, self.sandbox.cwd)
        root = self.check(base)
        try:
            results = await anyio.to_thread.run_sync(
                _glob, root, segments, self.sandbox.contains, stopper(signal)
            )
        except Stopped:
            signal.raise_if_aborted()
            raise
        signal.raise_if_aborted()
        if not results:
            return ToolOutput(f"No paths match `{args.pattern}`", locations=[Location(root)])
        shown = fitting(results[: self.max_results], self.max_bytes)
        text = "\n".join(shown)
        if len(results) > len(shown):
            text += (
                f"\n[showing {len(shown)} of {plural(len(results), 'match', 'matches')}; "
                "use a narrower pattern]"
            )
        return ToolOutput(text, locations=[Location(root)])


# grep ----------------------------------------------------------------------------------------


class GrepArgs(msgspec.Struct, forbid_unknown_fields=True):
    pattern: str
    path: str | None = None


class _GrepReport(msgspec.Struct):
    lines: list[str]
    """The matches shown (at most `max_matches`)."""
    matches: int = 0
    """Every match, shown or not."""
    matched_files: int = 0
    files: int = 0
    skipped_large: int = 0


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


def _read_text_file(path: str, check: Callable[[], None]) -> bytes | None:
    """The bytes of the regular file at the resolved `path`; None when it is not one, cannot be
    read, is binary, or is over the size limit (-1 marks that)."""
    try:
        fd = open_checked(path, os.O_RDONLY)
    except (OSError, PathRefused):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > GREP_MAX_FILE_BYTES:
            raise _TooLarge
        data = bytearray()
        while chunk := os.read(fd, CHUNK_BYTES):
            check()
            data += chunk
            if len(data) > GREP_MAX_FILE_BYTES:
                raise _TooLarge
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if b"\0" in data[:_BINARY_SNIFF] else bytes(data)


class _TooLarge(Exception):
    """A file over GREP_MAX_FILE_BYTES (counted, not searched)."""


def _grep(
    regex: re.Pattern[str],
    root: str,
    contains: Callable[[str], bool],
    check: Callable[[], None],
    max_matches: int,
) -> _GrepReport:
    """Every match under `root` counted; the first `max_matches` kept as lines."""
    report = _GrepReport(lines=[])
    for path in _files_under(root, check):
        check()
        try:
            real = os.path.realpath(path)
        except OSError:
            continue
        if not contains(real):
            continue
        try:
            data = _read_text_file(real, check)
        except _TooLarge:
            report.skipped_large += 1
            continue
        if data is None:
            continue
        report.files += 1
        text = data.decode("utf-8", errors="replace")
        before = report.matches
        for number, line in enumerate(text.split("\n"), start=1):
            if number % 10000 == 0:
                check()
            if regex.search(line) is None:
                continue
            report.matches += 1
            if len(report.lines) >= max_matches:
                continue
            line = line.rstrip("\r")
            if len(line) > GREP_MAX_LINE_CHARS:
                line = line[:GREP_MAX_LINE_CHARS] + "…"
            report.lines.append(f"{path}:{number}: {line}")
        report.matched_files += report.matches > before
    return report


class Grep(BuiltinTool[GrepArgs]):
    name = "grep"
    kind: ToolKind = "search"
    args_type = GrepArgs
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

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        max_matches: int = _DEFAULT.max_search_results,
        max_bytes: int = _DEFAULT.body_bytes,
    ) -> None:
        super().__init__(sandbox)
        self.max_matches = max_matches
        self.max_bytes = max_bytes
        self.description = (
            "Search the contents of text files for a Python regular expression (`re.search`, "
            "line by line). `path` is a file or a directory searched recursively (default: the "
            "working directory); binary files and `.git` are skipped. Each match is printed as "
            f"`path:line: text` with an absolute path; at most "
            f"{plural(max_matches, 'match', 'matches')} are shown, "
            "with the total. Use `(?i)` for a case-insensitive search and escape regex "
            "metacharacters to find literal text."
        )

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
                _grep, regex, root, self.sandbox.contains, stopper(signal), self.max_matches
            )
        except Stopped:
            signal.raise_if_aborted()
            raise
        signal.raise_if_aborted()
        notes: list[str] = []
        report.lines = fitting(report.lines, self.max_bytes)
        if report.matches > len(report.lines):
            matches = plural(report.matches, "match", "matches")
            notes.append(
                f"showing {len(report.lines)} of {matches} in "
                f"{plural(report.matched_files, 'file')}; narrow the pattern or path"
            )
        if report.skipped_large:
            notes.append(
                f"{plural(report.skipped_large, 'file')} over "
                f"{GREP_MAX_FILE_BYTES // (1024 * 1024)} MiB skipped"
            )
        if not report.lines:
            text = f"No matches for `{args.pattern}` in {plural(report.files, 'file')} under {root}"
        else:
            text = "\n".join(report.lines)
        if notes:
            text += "\n[" + "; ".join(notes) + "]"
        return ToolOutput(text, locations=where)
