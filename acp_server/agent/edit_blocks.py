"""File changes a model wrote as text, in one of the two text edit formats, read from its
answer: each becomes a `write_file` or an `edit_file` call, which the loop runs like any other
(see docs/rfc/implemented/feature/2026-12-06-text-edit-formats.md).

- `whole_file`: a file's path on a line of its own, then its whole new content in a fenced
  code block. The path may be decorated as models write it (`**stats.py**`, `` `stats.py` ``,
  `# stats.py`, `- stats.py`, `stats.py:`, `File: stats.py`), or stand in the fence's info string
  (```` ```python stats.py ````). Becomes `write_file(path, content)`.
- `search_replace`: a path on a line of its own, then `<<<<<<< SEARCH`, the lines to replace,
  `=======`, the new lines, `>>>>>>> REPLACE` (inside a fence or not; 5 to 9 marker
  characters). A block without a path line of its own takes the path of the block before it.
  Becomes `edit_file(path, old_text, new_text)`; an empty SEARCH creates a file that does not
  exist yet (`write_file`).

A block that cannot be read (a fence that never closes, a code block with no path when the
answer has no path at all, SEARCH without its `=======` or REPLACE, an empty SEARCH for a file
that exists: `creations_checked`) becomes a `Problem`, which
the loop answers to the model as a failed call, as it answers a malformed tool call. Prose and
code blocks around valid blocks are left alone: they are the model's explanation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from acp_server.models.base import ToolCallRequest
from acp_server.models.model_settings import EditFormat
from acp_server.tools.base import ToolOutput

__all__ = [
    "Listing",
    "Problem",
    "Replacement",
    "block_call",
    "creations_checked",
    "edit_blocks",
    "edits_applied",
]

MAX_BLOCKS = 32
"""More blocks than this in one answer: the rest are a problem, not edits."""


@dataclass(frozen=True)
class Listing:
    """A file's whole new content."""

    path: str
    content: str


@dataclass(frozen=True)
class Replacement:
    """One search/replace block: `search` (exact lines of the file) becomes `replace`."""

    path: str
    search: str
    replace: str


@dataclass(frozen=True)
class Problem:
    """A block that could not be read, and why (said to the model)."""

    path: str | None
    problem: str


Block = Listing | Replacement | Problem

_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}+|~{3,}+)(?P<info>[^`\n]*)$")
"""A fence line; `info` keeps the spaces around it (its words are split off). Linear: the
fence's run is taken whole (possessive), and no two parts of the pattern can match the same
spaces (a lazy info string between optional spaces backtracks in cubic time on a fence, many
spaces and a backtick)."""
_SEARCH = re.compile(r"^[ \t]*<{5,9}[ \t]*SEARCH[ \t]*$")
_DIVIDER = re.compile(r"^[ \t]*={5,9}[ \t]*$")
_REPLACE = re.compile(r"^[ \t]*>{5,9}[ \t]*REPLACE[ \t]*$")
_LABEL = re.compile(r"^(?:file(?:name)?|path)[ \t]*:[ \t]*", re.IGNORECASE)
_PATH = re.compile(r"^[\w.~/\\@+-][\w.~/\\@+ -]*$")
_EXTENSION = re.compile(r"\.[A-Za-z0-9_+-]{1,12}$")


def _as_path(text: str) -> str | None:
    """`text` as a file path if it looks like one written on its own line, else None: the
    decorations models put around a path are dropped; it needs a `/` or an extension, and no
    spaces unless it is quoted in backticks."""
    text = text.strip()
    text = re.sub(r"^#+[ \t]*", "", text)  # a markdown heading
    text = re.sub(r"^(?:[-+]|\d{1,3}[.)])[ \t]+", "", text)  # a list item's marker
    text = _LABEL.sub("", text)
    text = text.strip("*_").strip()
    quoted = text.startswith("`") and text.endswith("`") and len(text) > 2
    text = text.strip("`").strip().rstrip(":").strip()
    text = text.removeprefix("file://")
    if not text or len(text) > 4096 or (" " in text and not quoted):
        return None
    if not _PATH.match(text):
        return None
    if "/" not in text and "\\" not in text and not _EXTENSION.search(text):
        return None
    return text


def _path_in_info(info: str) -> str | None:
    """A path given in a fence's info string (` ```python stats.py `, ` ```stats.py `)."""
    for word in info.split()[::-1]:
        path = _as_path(word)
        if path is not None:
            return path
    return None


def _path_before(lines: list[str], index: int) -> str | None:
    """The path on the last non-empty line before `lines[index]`, if that line is one."""
    for back in range(index - 1, max(-1, index - 3), -1):
        if lines[back].strip():
            return _as_path(lines[back])
    return None


def _closing(lines: list[str], start: int, fence: str) -> int | None:
    """The index of the line closing the fence opened at `start`: the same fence character,
    at least as many, and nothing else on the line."""
    char = fence[0]
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped and set(stripped) == {char} and len(stripped) >= len(fence):
            return index
    return None


def _listings(lines: list[str]) -> list[Block]:
    blocks: list[Block] = []
    pathless = 0
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        path = _path_before(lines, index) or _path_in_info(opened["info"])
        end = _closing(lines, index, opened["fence"])
        if end is None:
            blocks.append(
                Problem(path, "the code block never ends: close it with a ``` line of its own")
            )
            break
        body = "".join(lines[index + 1 : end])
        if path is None:
            pathless += 1
        elif not body.strip():
            blocks.append(Problem(path, f"the code block for {path} is empty: give the whole file"))
        else:
            blocks.append(Listing(path, body))
        index = end + 1
    if pathless and not any(isinstance(block, Listing) for block in blocks):
        blocks.append(
            Problem(
                None,
                f"{pathless} code block(s) without a file path: write each changed file's "
                "path on the line before its code block, then the whole file in the block",
            )
        )
    return blocks


def _replacements(lines: list[str]) -> list[Block]:
    blocks: list[Block] = []
    last_path: str | None = None
    index = 0
    while index < len(lines):
        if _SEARCH.match(lines[index]) is None:
            index += 1
            continue
        before = index - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        fence = _FENCE.match(lines[before]) if before >= 0 else None
        if fence is not None:  # the block sits in a fence: the path is before it, or in it
            path = _path_in_info(fence["info"]) or _path_before(lines, before)
        else:
            path = _path_before(lines, index)
        path = path or last_path
        divider = next((i for i in range(index + 1, len(lines)) if _DIVIDER.match(lines[i])), None)
        ending = next((i for i in range(index + 1, len(lines)) if _REPLACE.match(lines[i])), None)
        if divider is None or ending is None or ending < divider:
            blocks.append(
                Problem(
                    path,
                    "a <<<<<<< SEARCH block without its ======= line and its >>>>>>> REPLACE "
                    "line: write SEARCH, the old lines, =======, the new lines, REPLACE",
                )
            )
            break
        if path is None:
            blocks.append(
                Problem(None, "a search/replace block without a file path on the line before it")
            )
        else:
            search = "".join(lines[index + 1 : divider])
            replace = "".join(lines[divider + 1 : ending])
            blocks.append(Replacement(path, search, replace))
            last_path = path
        index = ending + 1
    return blocks


def edit_blocks(text: str, edit_format: EditFormat) -> list[Block]:
    """The edits `text` holds in `edit_format`, in order (none for `tool_calls`)."""
    if edit_format == "tool_calls":
        return []
    lines = text.splitlines(keepends=True)
    found = _listings(lines) if edit_format == "whole_file" else _replacements(lines)
    if len(found) > MAX_BLOCKS:
        extra = len(found) - MAX_BLOCKS
        found = [
            *found[:MAX_BLOCKS],
            Problem(None, f"{extra} more block(s) past the first {MAX_BLOCKS} were not applied"),
        ]
    return found


def creations_checked(blocks: Sequence[Block], located: Callable[[str], str | None]) -> list[Block]:
    """`blocks`, with each empty SEARCH for a file that exists made a `Problem`: an empty SEARCH
    only creates a file (it does not replace a whole file with its REPLACE lines). `located`
    gives the absolute path a block's path names (None when it cannot tell: the write then
    says why); a file an earlier block of the answer creates exists for a later one. It reads
    the disk: call it in a thread."""
    created: set[str] = set()
    checked: list[Block] = []
    for block in blocks:
        if isinstance(block, Replacement) and not block.search:
            where = located(block.path)
            if where is not None and (where in created or os.path.lexists(where)):
                block = Problem(
                    block.path,
                    f"its SEARCH section is empty, but {block.path} exists: SEARCH must copy "
                    "the lines to change from the file, exactly; an empty SEARCH only creates "
                    "a new file",
                )
            elif where is not None:
                created.add(where)
        checked.append(block)
    return checked


def block_call(block: Block, call_id: str) -> ToolCallRequest:
    """The tool call that applies `block`: `write_file` for a listing (and for a search/replace
    block with an empty SEARCH, which creates a file: `creations_checked` has made one for a
    file that exists a problem), `edit_file` for a replacement; a
    problem is a call of `edit_file` whose arguments could not be read, so it fails saying why
    (told to the model as a malformed call is)."""
    if isinstance(block, Listing):
        return ToolCallRequest(
            call_id=call_id,
            name="write_file",
            arguments={"path": block.path, "content": block.content},
        )
    if isinstance(block, Replacement):
        if not block.search:
            arguments = {"path": block.path, "content": block.replace}
            return ToolCallRequest(call_id=call_id, name="write_file", arguments=arguments)
        arguments = {"path": block.path, "old_text": block.search, "new_text": block.replace}
        return ToolCallRequest(call_id=call_id, name="edit_file", arguments=arguments)
    where = f" (for {block.path})" if block.path else ""
    return ToolCallRequest(
        call_id=call_id,
        name="edit_file",
        arguments={},
        arguments_error=f"an edit block of your answer could not be read{where}: {block.problem}",
    )


def edits_applied(
    calls: Sequence[ToolCallRequest], outputs: Mapping[str, ToolOutput], blocks: frozenset[str]
) -> bool:
    """Whether every call of a step applied one of the model's edit blocks (ids in `blocks`),
    and none failed: the model's answer is complete, as aider takes it; nothing is asked of
    the model about it (a failure, though, is said to it)."""
    return all(
        call.call_id in blocks
        and (output := outputs.get(call.call_id)) is not None
        and not output.failed
        for call in calls
    )
