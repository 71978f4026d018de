"""What the built-in tools share (acp_server/tools/builtin/_common.py): counts that read as
English ("1 line", "2 lines", never "1 lines" or "line(s)"), titles cut to their first line,
line counts, lines that fit a byte budget, and arguments read for titles that never fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_server.cancellation import TurnCancellation
from acp_server.tools.base import ToolOutput
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.builtin._common import count_lines, fitting, plural, shorten, str_arg
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.workspace import PathRoots
from tests.support.tool_call import a_call

pytestmark = pytest.mark.anyio


def test_plural() -> None:
    assert [plural(n, "line") for n in (0, 1, 2)] == ["0 lines", "1 line", "2 lines"]
    assert plural(1, "match", "matches") == "1 match" and plural(3, "match", "matches") == (
        "3 matches"
    )


def test_a_title_is_the_first_line_cut_to_the_limit() -> None:
    assert shorten("  short  ") == "short"
    assert shorten("first\nsecond") == "first…"
    assert shorten("x" * 61) == "x" * 59 + "…"
    assert shorten("x" * 60) == "x" * 60
    assert shorten("") == ""


def test_lines_are_counted_with_or_without_a_final_break() -> None:
    assert [count_lines(t) for t in ("", "a", "a\n", "a\nb", "a\nb\n", "\n")] == [0, 1, 1, 2, 2, 1]


def test_only_the_lines_that_fit_with_their_breaks_are_kept() -> None:
    assert fitting(["abc", "é", "next"], 7) == ["abc", "é"]  # 4 + 3 bytes
    assert fitting(["abc", "é", "next"], 6) == ["abc"]
    assert fitting(["too long"], 3) == []


def test_an_argument_for_a_title_is_a_non_empty_string_or_none() -> None:
    arguments = {"path": "a.py", "empty": "", "number": 3}
    assert [str_arg(arguments, k) for k in ("path", "empty", "number", "missing")] == [
        "a.py",
        None,
        None,
        None,
    ]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


async def test_tool_results_count_in_singular_and_plural(root: Path) -> None:
    tools = {t.name: t for t in builtin_tools(PathRoots(str(root)), LocalFiles(), LocalCommands())}

    async def run(name: str, **arguments: Any) -> ToolOutput:
        return await tools[name].run(arguments, a_call(), TurnCancellation().signal)

    assert (await run("write_file", path="one.txt", content="a\n")).text == (
        f"Created {root}/one.txt (1 line)"
    )
    assert (await run("write_file", path="one.txt", content="a\nb\n")).text == (
        f"Overwrote {root}/one.txt (2 lines, previously 1)"
    )
    assert (await run("edit_file", path="one.txt", old_text="b", new_text="c")).text == (
        f"Edited {root}/one.txt at line 2: replaced 1 line with 1 line\nLine 2 now reads:\nc"
    )
    plan = await run("todo_write", entries=[{"content": "only step"}])
    assert (
        plan.text.splitlines()[0] == "Plan updated: 1 entry (0 completed, 0 in progress, 1 pending)"
    )
    nothing = await run("grep", pattern="absent", path="one.txt")
    assert nothing.text == f"No matches for `absent` in {root}/one.txt"
    past = await run("read_file", path="one.txt", offset=5)
    assert past.text == f"offset 5 is past the end of {root}/one.txt, which has 2 lines"
    (root / "single.txt").write_text("x\n")
    past = await run("read_file", path="single.txt", offset=3)
    assert past.text.endswith("which has 1 line")
    for output in (plan, nothing, past):
        assert "(s)" not in output.text
