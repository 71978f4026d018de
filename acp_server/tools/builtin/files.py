"""File tools: `read_file`, `write_file`, `edit_file` (`list_dir` is in `list_dir.py`).

Reads and writes go through `FileAccess` (the client's editor buffers when it offers `fs/*`);
what only the local disk can answer (does the file exist, is it a FIFO or a device, what is in
a directory) is asked of the local disk, through the same link-refusing opens (`local_files`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.session.records import FileCheckpoint
from acp_server.tools.base import Diff, Location, ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.budget import ToolBudget
from acp_server.tools.builtin._common import (
    BuiltinTool,
    count_lines,
    failed,
    plural,
    str_arg,
)
from acp_server.tools.builtin.near_miss import edited_lines, near_misses
from acp_server.tools.builtin.near_paths import near_paths_note
from acp_server.tools.checkpoints import Checkpoints
from acp_server.tools.images import read_image
from acp_server.tools.local_files import in_thread, special_kind
from acp_server.tools.text_window import TextWindow
from acp_server.tools.workspace import FileAccess, NotRegularFile, PathRoots

_DEFAULT = ToolBudget()

_PositiveInt = Annotated[int, msgspec.Meta(ge=1)]


def line_of(text: str, index: int) -> int:
    """The 1-based line number of character `index` of `text`."""
    return text.count("\n", 0, index) + 1


def local_state(path: str) -> str | None:
    """What is at the resolved `path` on the local disk: None (nothing), "file" or "dir";
    raises `NotRegularFile` for a FIFO, device or socket. A stat: it never blocks on them."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None  # a parent is a file: the write itself will say so
    kind = special_kind(mode)
    if kind is not None:
        raise NotRegularFile(path, kind)
    return "dir" if stat.S_ISDIR(mode) else "file"


async def _keep(
    checkpoints: Checkpoints | None, path: str, content: str, signal: TurnSignal
) -> list[FileCheckpoint]:
    """The checkpoint of `path` before `content` is written there (none without a store)."""
    return [] if checkpoints is None else [await checkpoints.keep(path, content, signal)]


def _not_kept(kept: Sequence[FileCheckpoint]) -> str:
    """The note a write's result carries when /rewind will not be able to restore the file."""
    skipped = next((cp.skipped for cp in kept if cp.skipped), None)
    return "" if skipped is None else f" (not kept for /rewind: {skipped})"


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
    path: Annotated[str, msgspec.Meta(description="The file to read.")]
    offset: Annotated[
        _PositiveInt | None,
        msgspec.Meta(
            description="1-based number of the first line to read (default 1).",
            extra_json_schema={"default": 1},
        ),
    ] = None
    limit: Annotated[
        _PositiveInt | None,
        msgspec.Meta(description="How many lines to read (default: as many as fit)."),
    ] = None


class ReadFile(BuiltinTool[ReadFileArgs]):
    name = "read_file"
    kind: ToolKind = "read"
    args_type = ReadFileArgs

    def __init__(
        self,
        path_roots: PathRoots,
        files: FileAccess,
        *,
        max_lines: int = _DEFAULT.max_read_lines,
        max_bytes: int = _DEFAULT.body_bytes,
        max_image_bytes: int = _DEFAULT.max_image_bytes,
    ) -> None:
        super().__init__(path_roots)
        self.files = files
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.max_image_bytes = max_image_bytes
        self.description = (
            "Read a text file from the workspace. `path` is absolute or relative to the working "
            "directory. By default the whole file is returned, up to "
            f"{plural(max_lines, 'line')} or {max_bytes // 1024} KiB; for larger files, pass "
            "`offset` (1-based number of the first line) and `limit` (number of lines) to read "
            "it in parts. The text is returned as it is in the file, without line numbers, so "
            "it can be copied into `edit_file`'s `old_text`. A PNG, JPEG, GIF or WebP image "
            f"(up to {max_image_bytes // 1024} KiB) is returned as the image itself when the "
            "model takes images, else described (type, pixels, bytes)."
        )

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

    async def act(
        self, args: ReadFileArgs, call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        path = self.check(args.path)
        start = args.offset or 1
        where = [Location(path, start)]
        wanted = self.max_lines if args.limit is None else min(args.limit, self.max_lines)
        try:
            # Asked of the local disk even when the client reads: a FIFO must not block either.
            if await in_thread(local_state, path) == "file":
                image = await read_image(path, self.max_image_bytes, signal)  # images: local
                if image is not None:
                    return image
            window = await self.files.read_window(path, start, wanted, self.max_bytes, signal)
        except FileNotFoundError:
            near = await in_thread(near_paths_note, self.path_roots.cwd, path)
            return failed(f"File not found: {path}{near}")
        except IsADirectoryError:
            return failed(f"{path} is a directory; use list_dir to see its entries")
        except OSError as exc:
            return failed(f"Cannot read {path}: {exc.strerror or exc}")
        signal.raise_if_aborted()
        if window.binary:
            return failed(f"{path} looks like a binary file (it contains NUL bytes); not shown")
        if window.total == 0:
            return ToolOutput(f"[{path} is empty]", locations=where)
        if window.count == 0:
            return failed(
                f"offset {start} is past the end of {path}, which has "
                f"{plural(window.total or 0, 'line')}"
            )
        if start == 1 and not window.more:
            return ToolOutput(window.text, locations=where)
        limited = args.limit is not None and args.limit <= self.max_lines
        notes = [self._span(window)]
        end = start + window.count - 1
        if window.cut:
            notes.append(
                f"line {start} is longer than {self.max_bytes} bytes and was cut; use bash "
                "(e.g. cut or head -c) to see the rest of it"
            )
        elif window.more and (window.capped or not limited):
            notes.append(
                f"output capped at {plural(self.max_lines, 'line')} / {self.max_bytes // 1024} KiB"
            )
        if window.more:
            notes.append(f"call read_file with offset={end + 1} to read on")
        separator = "" if window.text.endswith("\n") else "\n"
        return ToolOutput(f"{window.text}{separator}[{'; '.join(notes)}]", locations=where)

    @staticmethod
    def _span(window: TextWindow) -> str:
        end = window.first + window.count - 1
        if window.total is not None:
            return f"lines {window.first}-{end} of {window.total}"
        return (
            f"lines {window.first}-{end}; the file is {_size(window.size)}, too large to count "
            "its lines"
        )


def _size(count: int) -> str:
    if count < 1024:
        return plural(count, "byte")
    value = count / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


# write_file ----------------------------------------------------------------------------------


class WriteFileArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, msgspec.Meta(description="The file to create or overwrite.")]
    content: Annotated[str, msgspec.Meta(description="The complete new content.")]


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

    def __init__(
        self, path_roots: PathRoots, files: FileAccess, checkpoints: Checkpoints | None = None
    ) -> None:
        super().__init__(path_roots)
        self.files = files
        self.checkpoints = checkpoints

    def title(self, arguments: Mapping[str, Any]) -> str:
        path = str_arg(arguments, "path")
        return f"Write {self.display(path)}" if path else "Write file"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return self.location_of(arguments, "path")

    async def act(
        self, args: WriteFileArgs, call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        path = self.check(args.path)
        # A new file is known as new here, not from the client's answer to a read: clients
        # answer a missing file with an error they show, or with empty text.
        state = await in_thread(local_state, path)
        if state == "dir":
            return failed(f"{path} is a directory, not a file")
        old = None if state is None else await _read_existing(self.files, path, signal)
        if isinstance(old, ToolOutput):
            return old
        signal.raise_if_aborted()
        kept = await _keep(self.checkpoints, path, args.content, signal)
        try:
            await self.files.write_text(path, args.content, signal)
        except OSError as exc:
            return failed(f"Cannot write {path}: {exc.strerror or exc}")
        lines = plural(count_lines(args.content), "line")
        if old is None:
            near = await in_thread(near_paths_note, self.path_roots.cwd, path)
            text = f"Created {path} ({lines})"
            if near:
                text += f"{near}: if you meant that file, write to it instead"
        elif old == args.content:
            text = f"Wrote {path}: the content is unchanged ({lines})"
        else:
            text = f"Overwrote {path} ({lines}, previously {count_lines(old)})"
        text += _not_kept(kept)
        return ToolOutput(
            text,
            diffs=[Diff(path, old, args.content)],
            locations=[Location(path)],
            checkpoints=kept,
        )


# edit_file -----------------------------------------------------------------------------------


class EditFileArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, msgspec.Meta(description="The file to edit.")]
    old_text: Annotated[
        str, msgspec.Meta(description="The exact text to replace; must occur exactly once.")
    ]
    new_text: Annotated[str, msgspec.Meta(description="The replacement text.")]


def _occurrences(text: str, needle: str) -> list[int]:
    """Start indexes of every (possibly overlapping) occurrence of `needle`."""
    found: list[int] = []
    index = text.find(needle)
    while index != -1:
        found.append(index)
        index = text.find(needle, index + 1)
    return found


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

    def __init__(
        self, path_roots: PathRoots, files: FileAccess, checkpoints: Checkpoints | None = None
    ) -> None:
        super().__init__(path_roots)
        self.files = files
        self.checkpoints = checkpoints

    def title(self, arguments: Mapping[str, Any]) -> str:
        path = str_arg(arguments, "path")
        return f"Edit {self.display(path)}" if path else "Edit file"

    def locations(self, arguments: Mapping[str, Any]) -> Sequence[Location]:
        return self.location_of(arguments, "path")

    async def act(
        self, args: EditFileArgs, call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
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
            near = await in_thread(near_paths_note, self.path_roots.cwd, path)
            return failed(f"File not found: {path}{near} (to create a file, use write_file)")
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
            # Bounded (near_miss.SIMILARITY_BUDGET), and off the event loop all the same.
            hint = await in_thread(near_misses, content, old_text)
            signal.raise_if_aborted()
            return failed(
                f"old_text was not found in {path}. It must match the file exactly, including "
                "whitespace, indentation and line breaks."
                f"{hint}\n"
                "Call edit_file again with old_text copied exactly from the file (read it with "
                "read_file if it is not shown above)."
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
        kept = await _keep(self.checkpoints, path, updated, signal)
        try:
            await self.files.write_text(path, updated, signal)
        except OSError as exc:
            return failed(f"Cannot write {path}: {exc.strerror or exc}")
        line = line_of(content, index)
        removed, added = count_lines(old_text), count_lines(new_text)
        return ToolOutput(
            f"Edited {path} at line {line}: replaced {plural(removed, 'line')} with "
            f"{plural(added, 'line')}{_not_kept(kept)}"
            f"{edited_lines(updated, line, max(added, 1))}",
            diffs=[Diff(path, content, updated)],
            locations=[Location(path, line)],
            checkpoints=kept,
        )
