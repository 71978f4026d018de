"""How much of a tool's result reaches the model, and the cut that says what it left out.

Context is a budget: every tool result is capped (`ToolBudget.max_result_bytes`, the `[tools]`
table of the config file). The built-in tools shape their own results to fit, with their own
way to get the rest (`offset`, a narrower pattern); `cap_output` is the last guard the agent
loop applies to every result, MCP tools' and subagents' included: it keeps the head and the
tail and says how much of the middle it cut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # A type only: the config file's reader imports `ToolBudget` before `session/new` is
    # answered, without the tools' base (the ready-before-the-runtime RFC).
    from acp_server.tools.base import ToolOutput

NOTE_ROOM = 512
"""Bytes a tool keeps free under the cap for its own closing note."""


@dataclass(frozen=True)
class ToolBudget:
    """The limits on what tools return to the model (`[tools]` in the config file)."""

    max_result_bytes: int = 64 * 1024
    """The most text of one tool result sent to the model, in UTF-8 bytes (at least 1024)."""
    max_read_lines: int = 2000
    """Lines `read_file` returns at most (its window when no `limit` is given)."""
    max_search_results: int = 500
    """Matches `grep`, paths `glob` and entries `list_dir` show at most."""
    max_checkpoint_bytes: int = 4 << 20
    """The largest file whose content a file tool's write keeps for a rewind (0: none)."""
    max_checkpoint_store_bytes: int = 256 << 20
    """The most the checkpoint store holds in all; the least recently written contents are
    evicted to stay under it (`acp_server.tools.checkpoint_store`)."""
    max_image_bytes: int = 3_932_160
    """The largest image file `read_file` returns as an image (3.75 MiB: its base64 is 5 MiB,
    the per-image limit of the Anthropic API); larger ones get a text note."""

    @property
    def body_bytes(self) -> int:
        """What a tool's result may hold besides its closing note."""
        return max(self.max_result_bytes - NOTE_ROOM, self.max_result_bytes // 2)


_MINIMUMS = {
    "max_result_bytes": 1024,
    "max_read_lines": 1,
    "max_search_results": 1,
    "max_checkpoint_bytes": 0,
    "max_checkpoint_store_bytes": 0,
    "max_image_bytes": 1024,
}
"""The `[tools]` keys and their smallest values (a result must hold its closing note)."""

_MAXIMUMS = {
    "max_result_bytes": 16 << 20,
    "max_read_lines": 1_000_000,
    "max_search_results": 100_000,
    "max_checkpoint_bytes": 256 << 20,
    "max_checkpoint_store_bytes": 1 << 40,
    "max_image_bytes": 15 << 20,
}
"""The largest values. Each of these caps bounds what is held in memory at once, written to the
journal or sent in one request; a cap without a ceiling (`max_image_bytes = 1e20`) would let
one file's size decide all three."""


def tool_budget(
    entry: Any, error: Callable[[str, str | None, str | None], Exception]
) -> ToolBudget:
    """The config file's `[tools]` table; `error(problem, key, table)` makes the exception
    that names the file and line."""
    if not isinstance(entry, dict):
        raise error("[tools] must be a table", "tools", None)
    values: dict[str, int] = {}
    for key, value in entry.items():
        minimum = _MINIMUMS.get(key)
        if minimum is None:
            raise error(
                f"unknown key `{key}` in [tools]; expected {', '.join(_MINIMUMS)}", key, "tools"
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise error(f"[tools] `{key}` must be an integer of at least {minimum}", key, "tools")
        if value > _MAXIMUMS[key]:
            raise error(f"[tools] `{key}` must be at most {_MAXIMUMS[key]}", key, "tools")
        values[key] = value
    return ToolBudget(**values)


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", errors="replace"))


def keep_head_and_tail(text: str, max_bytes: int, hint: str) -> str:
    """`text` if it fits in `max_bytes`; else its beginning and its end (cut at line breaks
    where there are any) around a note saying how much of the middle was cut and `hint`."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= max_bytes:
        return text
    half = max((max_bytes - NOTE_ROOM) // 2, 1)
    head = data[:half]
    newline = head.rfind(b"\n")
    if newline >= half // 2:
        head = head[: newline + 1]
    tail = data[len(data) - half :]
    newline = tail.find(b"\n")
    if 0 <= newline < half // 2:
        tail = tail[newline + 1 :]
    middle = data[len(head) : len(data) - len(tail)]
    lines = middle.count(b"\n")
    cut = f"{len(middle)} bytes" + (f", {lines} line break{'s' * (lines != 1)}" if lines else "")
    note = f"[... {cut} cut from the middle; {hint} ...]"
    start = head.decode("utf-8", errors="ignore")
    separator = "" if start.endswith("\n") or not start else "\n"
    return f"{start}{separator}{note}\n{tail.decode('utf-8', errors='ignore')}"


def cap_output(output: ToolOutput, max_bytes: int) -> ToolOutput:
    """`output` with its text cut to `max_bytes` (head and tail kept), saying so."""
    if utf8_size(output.text) <= max_bytes:
        return output
    hint = (
        f"the result was over the {max_bytes}-byte limit for tool results; ask for less at "
        "once (a narrower query, an offset and a limit)"
    )
    return dataclasses.replace(output, text=keep_head_and_tail(output.text, max_bytes, hint))
