"""File tools: `read_file`, `write_file`, `edit_file`, `list_dir`.

Reads and writes go through `FileAccess` (the client's editor buffers when it offers `fs/*`);
listing a directory reads the local disk.

Over 400 lines: the four file tools share the read, line and diff helpers above them.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import anyio.to_thread
import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.tools.base import Diff, Location, ToolKind, ToolOutput
from acp_server.tools.builtin._common import BuiltinTool, count_lines, failed, str_arg
from acp_server.tools.workspace import FileAccess, Sandbox

READ_MAX_LINES = 2000
READ_MAX_BYTES = 256 * 1024
LIST_MAX_ENTRIES = 1000

_PositiveInt = Annotated[int, msgspec.Meta(ge=1)]


def split_lines(text: str) -> list[str]:
    """`text` cut after each "\\n" (only "\\n": line numbers agree with every other tool)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_of(text: str, index: int) -> int:
    """The 1-based line number of character `index` of `text`."""
    return text.count("\n", 0, index) + 1


async def _read_existing(
    files: FileAccess, path: str, signal: TurnSignal
) -> str | ToolOutput | None:
    """The file's text, None if it does not exist, or a failed output."""
    try:
        return await files.read_text(path, signal)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return failed(f"{path} is a directory, not a file")
    except OSError as exc:
        return failed(f"Cannot read {path}: {exc.strerror or exc}")


# read_file -----------------------------------------------------------------------------------


class ReadFileArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    offset: _PositiveInt | None = None
    limit: _PositiveInt | None = None


class ReadFile(BuiltinTool[ReadFileArgs]):
    name = "read_file"
    kind: ToolKind = "read"
    args_type = ReadFileArgs
    description = (
        "Read a text file from the workspace. `path` is absolute or relative to the working "
        "directory. By default the whole file is returned, up to 2000 lines or 256 KiB; for "
        "larger files, pass `offset` (1-based number of the first line) and `limit` (number of "
        "lines) to read it in parts. The text is returned as it is in the file, without line "
        "numbers, so it can be copied into `edit_file`'s `old_text`."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to read."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "1-based number of the first line to read (default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "How many lines to read (default: up to 2000).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def __init__(
        self,
        sandbox: Sandbox,
        files: FileAccess,
        *,
        max_lines: int = READ_MAX_LINES,
        max_bytes: int = READ_MAX_BYTES,
    ) -> None:
        super().__init__(sandbox)
        self.files = files
        self.max_lines = max_lines
        self.max_bytes = max_bytes

    def title(self, arguments: Mapping[str, Any]) -> str:
        path = str_arg(arguments, "path")
        if path is None:
            return "Read file"
        offset, limit = arguments.get("offset"), arguments.get("limit")
        if isinstance(offset, int) and isinstance(limit, int):
            return f"Read {self.display(path)} (lines {offset}-{offset + limit - 1})"
        if isinstance(offset, int):
            return f"Read {self.display(path)} (from line {offset})"
        return f"Read {self.display(path)}"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        offset = arguments.get("offset")
        line = offset if isinstance(offset, int) and not isinstance(offset, bool) else 1
        return [Location(loc.path, line) for loc in self.location_of(arguments, "path")]

    async def call(self, args: ReadFileArgs, signal: TurnSignal) -> ToolOutput:
        path = self.check(args.path)
        start = args.offset or 1
        where = [Location(path, start)]
        try:
            text = await self.files.read_text(path, signal)
        except FileNotFoundError:
            return failed(f"File not found: {path}")
        except IsADirectoryError:
            return failed(f"{path} is a directory; use list_dir to see its entries")
        except OSError as exc:
            return failed(f"Cannot read {path}: {exc.strerror or exc}")
        signal.raise_if_aborted()
        if "\0" in text[:8192]:
            return failed(f"{path} looks like a binary file (it contains NUL bytes); not shown")
        lines = split_lines(text)
        total = len(lines)
        if total == 0:
            return ToolOutput(f"[{path} is empty]", locations=where)
        if start > total:
            return failed(f"offset {start} is past the end of {path}, which has {total} lines")
        limit = args.limit
        wanted = self.max_lines if limit is None else min(limit, self.max_lines)
        capped = (limit is None or limit > self.max_lines) and start - 1 + wanted < total
        chosen: list[str] = []
        size = 0
        cut_line = False
        for line in lines[start - 1 : start - 1 + wanted]:
            length = len(line.encode("utf-8", errors="replace"))
            if size + length > self.max_bytes:
                capped = True
                if not chosen:
                    chosen.append(line[: self.max_bytes])
                    cut_line = True
                break
            chosen.append(line)
            size += length
        end = start + len(chosen) - 1
        body = "".join(chosen)
        if start == 1 and end == total and not cut_line:
            return ToolOutput(body, locations=where)
        notes = [f"lines {start}-{end} of {total}"]
        if cut_line:
            notes.append(f"line {start} is longer than {self.max_bytes} bytes and was cut")
        elif capped:
            notes.append(f"output capped at {self.max_lines} lines / {self.max_bytes // 1024} KiB")
        if end < total:
            notes.append(f"call read_file with offset={end + 1} to read on")
        separator = "" if body.endswith("\n") else "\n"
        return ToolOutput(f"{body}{separator}[{'; '.join(notes)}]", locations=where)


# write_file ----------------------------------------------------------------------------------


class WriteFileArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    content: str


class WriteFile(BuiltinTool[WriteFileArgs]):
    name = "write_file"
    kind: ToolKind = "edit"
    args_type = WriteFileArgs
    description = (
        "Create a file, or replace a file's whole content, in the workspace. Missing parent "
        "directories are created. `path` is absolute or relative to the working directory. To "
        "change part of an existing file, prefer `edit_file`, which does not need the whole "
        "content."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to create or overwrite."},
            "content": {"type": "string", "description": "The complete new content."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def __init__(self, sandbox: Sandbox, files: FileAccess) -> None:
        super().__init__(sandbox)
        self.files = files

    def title(self, arguments: Mapping[str, Any]) -> str:
        path = str_arg(arguments, "path")
        return f"Write {self.display(path)}" if path else "Write file"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return self.location_of(arguments, "path")

    async def call(self, args: WriteFileArgs, signal: TurnSignal) -> ToolOutput:
        path = self.check(args.path)
        old = await _read_existing(self.files, path, signal)
        if isinstance(old, ToolOutput):
            return old
        signal.raise_if_aborted()
        try:
            await self.files.write_text(path, args.content, signal)
        except OSError as exc:
            return failed(f"Cannot write {path}: {exc.strerror or exc}")
        lines = count_lines(args.content)
        if old is None:
            text = f"Created {path} ({lines} lines)"
        elif old == args.content:
            text = f"Wrote {path}: the content is unchanged ({lines} lines)"
        else:
            text = f"Overwrote {path} ({lines} lines, previously {count_lines(old)})"
        return ToolOutput(text, diffs=[Diff(path, old, args.content)], locations=[Location(path)])


# edit_file -----------------------------------------------------------------------------------


class EditFileArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    old_text: str
    new_text: str


def _occurrences(text: str, needle: str) -> list[int]:
    """Start indexes of every (possibly overlapping) occurrence of `needle`."""
    found: list[int] = []
    index = text.find(needle)
    while index != -1:
        found.append(index)
        index = text.find(needle, index + 1)
    return found


def _numbered(lines: Sequence[str], first: int, limit: int = 12) -> str:
    shown = [f"  {first + i:>5} | {line.rstrip(chr(10))}" for i, line in enumerate(lines[:limit])]
    if len(lines) > limit:
        shown.append(f"  ... ({len(lines) - limit} more lines)")
    return "\n".join(shown)


_SIMILARITY_SCAN_LINES = 20000


def _near_misses(content: str, old_text: str) -> str:
    """Where the model probably meant: a whitespace-insensitive match, or the closest lines."""
    file_lines = split_lines(content)
    needle = [line.strip() for line in old_text.split("\n")]
    while needle and not needle[0]:
        needle.pop(0)
    while needle and not needle[-1]:
        needle.pop()
    if not needle:
        return ""
    stripped = [line.strip() for line in file_lines[:_SIMILARITY_SCAN_LINES]]
    for i in range(len(stripped) - len(needle) + 1):
        if stripped[i : i + len(needle)] == needle:
            block = file_lines[i : i + len(needle)]
            return (
                f"\nThe same text except for whitespace/indentation is at line {i + 1}:\n"
                f"{_numbered(block, i + 1)}"
            )
    target = max(needle, key=len)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    scored: list[tuple[float, int]] = []
    for number, line in enumerate(stripped, start=1):
        if not line:
            continue
        matcher.set_seq1(line)
        if matcher.real_quick_ratio() < 0.6 or matcher.quick_ratio() < 0.6:
            continue
        ratio = matcher.ratio()
        if ratio >= 0.6:
            scored.append((ratio, number))
    if not scored:
        return ""
    best = sorted(scored, key=lambda item: (-item[0], item[1]))[:3]
    shown = "\n".join(
        _numbered([file_lines[number - 1]], number)
        for _, number in sorted(best, key=lambda x: x[1])
    )
    return f"\nThe closest line(s) to {target!r}:\n{shown}"


class EditFile(BuiltinTool[EditFileArgs]):
    name = "edit_file"
    kind: ToolKind = "edit"
    args_type = EditFileArgs
    description = (
        "Replace one exact piece of text in an existing file. `old_text` must occur exactly once "
        "in the file, matching it character for character, including whitespace and "
        "indentation; include enough surrounding lines to make it unique. It is replaced by "
        "`new_text` (which may be empty to delete it). Read the file first so that `old_text` is "
        "copied from its current content. To create a file, use `write_file`."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to edit."},
            "old_text": {
                "type": "string",
                "description": "The exact text to replace; must occur exactly once.",
            },
            "new_text": {"type": "string", "description": "The replacement text."},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    }

    def __init__(self, sandbox: Sandbox, files: FileAccess) -> None:
        super().__init__(sandbox)
        self.files = files

    def title(self, arguments: Mapping[str, Any]) -> str:
        path = str_arg(arguments, "path")
        return f"Edit {self.display(path)}" if path else "Edit file"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return self.location_of(arguments, "path")

    async def call(self, args: EditFileArgs, signal: TurnSignal) -> ToolOutput:
        path = self.check(args.path)
        if not args.old_text:
            return failed(
                "old_text is empty: give the exact text to replace (to create a file or replace "
                "all of it, use write_file)"
            )
        if args.old_text == args.new_text:
            return failed("old_text and new_text are identical: there is nothing to change")
        content = await _read_existing(self.files, path, signal)
        if isinstance(content, ToolOutput):
            return content
        if content is None:
            return failed(f"File not found: {path} (to create a file, use write_file)")
        signal.raise_if_aborted()
        old_text, new_text = args.old_text, args.new_text
        found = _occurrences(content, old_text)
        if not found and "\r\n" in content and "\r\n" not in old_text:
            # The file has CRLF line ends; the model almost always writes "\n".
            crlf_old = old_text.replace("\n", "\r\n")
            found = _occurrences(content, crlf_old)
            if found:
                old_text, new_text = crlf_old, new_text.replace("\n", "\r\n")
        if not found:
            return failed(
                f"old_text was not found in {path}. It must match the file exactly, including "
                "whitespace, indentation and line breaks."
                f"{_near_misses(content, old_text)}\n"
                "Read the file again with read_file and copy the text to replace exactly."
            )
        if len(found) > 1:
            lines = ", ".join(str(line_of(content, index)) for index in found[:20])
            more = f" and {len(found) - 20} more" if len(found) > 20 else ""
            return failed(
                f"old_text occurs {len(found)} times in {path} (starting at lines {lines}{more}); "
                "it must occur exactly once. Include more surrounding lines in old_text so that "
                "it matches only the place you want to change."
            )
        index = found[0]
        updated = content[:index] + new_text + content[index + len(old_text) :]
        try:
            await self.files.write_text(path, updated, signal)
        except OSError as exc:
            return failed(f"Cannot write {path}: {exc.strerror or exc}")
        line = line_of(content, index)
        removed, added = count_lines(old_text), count_lines(new_text)
        return ToolOutput(
            f"Edited {path} at line {line}: replaced {removed} line(s) with {added} line(s)",
            diffs=[Diff(path, content, updated)],
            locations=[Location(path, line)],
        )


# list_dir ------------------------------------------------------------------------------------


class ListDirArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: str | None = None


def _list(path: str) -> list[str]:
    entries: list[str] = []
    with os.scandir(path) as scan:
        for entry in scan:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            entries.append(entry.name + "/" if is_dir else entry.name)
    entries.sort()
    return entries


class ListDir(BuiltinTool[ListDirArgs]):
    name = "list_dir"
    kind: ToolKind = "read"
    args_type = ListDirArgs
    description = (
        "List the entries of a directory in the workspace (default: the working directory), "
        "sorted by name; directories end with '/'. At most 1000 entries are shown. Use glob to "
        "find files by pattern across directories."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "The directory to list (default: the working directory).",
            },
        },
        "required": [],
        "additionalProperties": False,
    }

    def __init__(self, sandbox: Sandbox, *, max_entries: int = LIST_MAX_ENTRIES) -> None:
        super().__init__(sandbox)
        self.max_entries = max_entries

    def title(self, arguments: Mapping[str, Any]) -> str:
        return f"List {self.display(str_arg(arguments, 'path') or '.')}"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return self.location_of(arguments, "path", self.sandbox.cwd)

    async def call(self, args: ListDirArgs, signal: TurnSignal) -> ToolOutput:
        path = self.check(args.path or self.sandbox.cwd)
        try:
            entries = await anyio.to_thread.run_sync(_list, path)
        except FileNotFoundError:
            return failed(f"Directory not found: {path}")
        except NotADirectoryError:
            return failed(f"{path} is a file, not a directory; use read_file to read it")
        except OSError as exc:
            return failed(f"Cannot list {path}: {exc.strerror or exc}")
        signal.raise_if_aborted()
        where = [Location(path)]
        if not entries:
            return ToolOutput(f"{path} is empty", locations=where)
        shown = entries[: self.max_entries]
        text = f"{path}:\n" + "\n".join(shown)
        if len(entries) > len(shown):
            text += f"\n[{len(entries) - len(shown)} more entries not shown]"
        return ToolOutput(text, locations=where)
