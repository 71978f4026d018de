"""What `edit_file` shows the model besides its verdict: where it probably meant when
`old_text` is not in the file, and the edited lines as they now are when the edit applied.

A whitespace-insensitive match of the whole `old_text` is shown with line numbers. Else the (at
most three) lines most like its longest line are listed, and the best of them is shown again
with the lines after it up to the next blank line (at most `BLOCK_LINES`), *without* line
numbers, exactly as they are in the file: a small model that guessed the text (a parameter's
name, say) can copy `old_text` from there instead of guessing again.

After an edit, the new text and the `AFTER_LINES` lines after it are shown as they now are
(at most `BLOCK_LINES`): a model that replaced a function's first line with a whole function
sees the old body left below it.

The similarity scan is bounded work (`SIMILARITY_BUDGET` character pairs; the answer says where
it stopped) and `edit_file` runs it in a worker thread: a file of long, alike lines cost 254 s
on the event loop before (20,000 lines of 400 characters), 0.27 s now.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from acp_server.tools.builtin._common import plural

__all__ = ["AFTER_LINES", "BLOCK_LINES", "edited_lines", "near_misses"]

AFTER_LINES = 3
"""Lines after an edit's new text that are shown with it."""

BLOCK_LINES = 15
"""At most this many lines of the file are shown after the closest line (it included)."""

_SIMILARITY_SCAN_LINES = 20000
_BLOCK_CHARS = 2000

SIMILARITY_BUDGET = 5_000_000
"""Character pairs the similarity scan may compare in all (`len(line) * len(target)` per
full ratio, `len(line) + len(target)` per quick one). A file of long lines alike to the target
(generated, minified, hostile) costs 160M pairs per 1,000 lines of 400 characters; the scan
stops at the budget and says how far it got."""


def _numbered(lines: Sequence[str], first: int, limit: int = 12) -> str:
    shown = [f"  {first + i:>5} | {line.rstrip(chr(10))}" for i, line in enumerate(lines[:limit])]
    if len(lines) > limit:
        shown.append(f"  ... ({plural(len(lines) - limit, 'more line')})")
    return "\n".join(shown)


def _block(file_lines: Sequence[str], number: int, least: int) -> str:
    """Line `number` (1-based) and the ones after it: at least `least` lines, then up to the
    next blank line, within `BLOCK_LINES` and `_BLOCK_CHARS`."""
    block: list[str] = []
    size = 0
    for line in file_lines[number - 1 : number - 1 + BLOCK_LINES]:
        if block and len(block) >= least and not line.strip():
            break
        if size + len(line) > _BLOCK_CHARS:
            break
        block.append(line)
        size += len(line)
    last = number + len(block) - 1
    if last == number:
        where = f"Line {number} exactly as it is"
    else:
        where = f"Lines {number}-{last} exactly as they are"
    text = "".join(block).rstrip("\n")
    return f"\n{where} in the file (copy old_text from here, without line numbers):\n{text}"


def near_misses(content: str, old_text: str) -> str:
    """Where the model probably meant (see the module docstring); empty when nothing is
    close."""
    file_lines = content.split("\n")
    file_lines = [line + "\n" for line in file_lines[:-1]] + (
        [file_lines[-1]] if file_lines[-1] else []
    )
    needle = [line.strip() for line in old_text.split("\n")]
    while needle and not needle[0]:
        needle.pop(0)
    while needle and not needle[-1]:
        needle.pop()
    if not needle:
        return ""
    stripped = [line.strip() for line in file_lines[:_SIMILARITY_SCAN_LINES]]
    for i in range(len(stripped) - len(needle) + 1):
        # The first line first: slicing at every line copies the whole needle each time.
        if stripped[i] == needle[0] and stripped[i : i + len(needle)] == needle:
            block = file_lines[i : i + len(needle)]
            return (
                f"\nThe same text except for whitespace/indentation is at line {i + 1}:\n"
                f"{_numbered(block, i + 1)}"
            )
    target = max(needle, key=len)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    scored: list[tuple[float, int]] = []
    spent = 0
    stopped_at: int | None = None
    for number, line in enumerate(stripped, start=1):
        if not line:
            continue
        matcher.set_seq1(line)
        if matcher.real_quick_ratio() < 0.6:
            continue
        spent += len(line) + len(target)
        if spent <= SIMILARITY_BUDGET and matcher.quick_ratio() < 0.6:
            continue
        spent += len(line) * len(target)
        if spent > SIMILARITY_BUDGET:
            stopped_at = number
            break
        ratio = matcher.ratio()
        if ratio >= 0.6:
            scored.append((ratio, number))
    cut = (
        f"\n(Only lines 1-{stopped_at - 1} were compared with {target!r:.80}: the file's "
        "lines are long and alike.)"
        if stopped_at is not None
        else ""
    )
    if not scored:
        return cut
    best = sorted(scored, key=lambda item: (-item[0], item[1]))[:3]
    shown = "\n".join(
        _numbered([file_lines[number - 1]], number)
        for _, number in sorted(best, key=lambda x: x[1])
    )
    closest = f"\nThe closest {'line' if len(best) == 1 else 'lines'} to {target!r}:\n{shown}"
    return closest + _block(file_lines, best[0][1], len(needle)) + cut


def edited_lines(updated: str, first: int, new_lines: int) -> str:
    """The lines from `first` (1-based): the edit's `new_lines` and `AFTER_LINES` more, within
    `BLOCK_LINES` and `_BLOCK_CHARS`, as they now are; empty when the file ends before."""
    file_lines = updated.split("\n")
    wanted = file_lines[first - 1 : first - 1 + min(new_lines + AFTER_LINES, BLOCK_LINES)]
    shown: list[str] = []
    size = 0
    for line in wanted:
        if size + len(line) + 1 > _BLOCK_CHARS:
            break
        shown.append(line)
        size += len(line) + 1
    while shown and not shown[-1].strip():
        shown.pop()
    if not shown:
        return ""
    last = first + len(shown) - 1
    where = f"Line {first} now reads" if last == first else f"Lines {first}-{last} now read"
    return f"\n{where}:\n" + "\n".join(shown)
