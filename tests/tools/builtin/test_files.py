"""read_file, write_file and edit_file (acp_server/tools/builtin/files.py) on real files in a
temporary workspace; failure messages help the model retry. list_dir:
tests/tools/builtin/test_list_dir.py.
"""

from __future__ import annotations

import anyio
import pytest

from acp_server.cancellation import TurnCancellation, TurnSignal
from acp_server.tools.base import Diff, Location
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.builtin.files import ReadFile
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from tests.support.tool_call import a_call
from tests.support.tool_workspace import SOURCE, Workspace

pytestmark = pytest.mark.anyio


async def test_read_file_whole_and_by_offset_and_limit(ws: Workspace) -> None:
    path = ws.file("src/lines.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    whole = await ws.run("read_file", path="src/lines.txt")
    assert not whole.failed
    assert whole.text == path.read_text()
    assert whole.locations == [Location(str(path), 1)]

    part = await ws.run("read_file", path=str(path), offset=3, limit=2)
    assert part.text.startswith("line 3\nline 4\n[")
    assert "lines 3-4 of 10" in part.text
    assert "offset=5" in part.text
    assert part.locations == [Location(str(path), 3)]

    tail = await ws.run("read_file", path="src/lines.txt", offset=9)
    assert tail.text.startswith("line 9\nline 10\n[lines 9-10 of 10]")

    past = await ws.run("read_file", path="src/lines.txt", offset=11)
    assert past.failed and "past the end" in past.text and "10 lines" in past.text


async def test_read_file_caps_lines_and_bytes(ws: Workspace) -> None:
    ws.file("big.txt", "".join(f"{i}\n" for i in range(1, 101)))
    reader = ReadFile(ws.path_roots, LocalFiles(), max_lines=5, max_bytes=1024)
    output = await reader.run({"path": "big.txt"}, a_call(), TurnCancellation().signal)
    assert output.text.startswith("1\n2\n3\n4\n5\n[lines 1-5 of 100; output capped at 5 lines")
    assert "offset=6" in output.text

    ws.file("wide.txt", ("x" * 300 + "\n") * 10)
    output = await reader.run({"path": "wide.txt"}, a_call(), TurnCancellation().signal)
    assert output.text.count("x" * 300) == 3
    assert "lines 1-3 of 10" in output.text and "capped" in output.text


async def test_read_file_failures(ws: Workspace) -> None:
    (ws.root / "adir").mkdir()
    ws.file("empty.txt", "")
    missing = await ws.run("read_file", path="nope.txt")
    assert missing.failed and missing.text == f"File not found: {ws.root}/nope.txt"
    directory = await ws.run("read_file", path="adir")
    assert directory.failed and "is a directory; use list_dir" in directory.text
    (ws.root / "blob.bin").write_bytes(b"\x7fELF\0\0\x01")
    binary = await ws.run("read_file", path="blob.bin")
    assert binary.failed and "binary file" in binary.text
    empty = await ws.run("read_file", path="empty.txt")
    assert not empty.failed and "is empty" in empty.text


# write_file -----------------------------------------------------------------------------------


async def test_write_file_new_file_creates_parents_and_diffs_from_none(ws: Workspace) -> None:
    output = await ws.run("write_file", path="a/b/new.txt", content="hello\nworld\n")
    target = ws.root / "a/b/new.txt"
    assert not output.failed
    assert target.read_text() == "hello\nworld\n"
    assert output.diffs == [Diff(str(target), None, "hello\nworld\n")]
    assert output.locations == [Location(str(target))]
    assert output.text == f"Created {target} (2 lines)"


async def test_write_file_existing_file_diffs_from_the_old_text(ws: Workspace) -> None:
    target = ws.file("x.txt", "old\n")
    output = await ws.run("write_file", path=str(target), content="new\n")
    assert target.read_text() == "new\n"
    assert output.diffs == [Diff(str(target), "old\n", "new\n")]
    assert output.text.startswith(f"Overwrote {target}")

    onto_dir = await ws.run("write_file", path=".", content="x")
    assert onto_dir.failed and "is a directory" in onto_dir.text


# edit_file ------------------------------------------------------------------------------------


async def test_edit_file_replaces_the_single_match(ws: Workspace) -> None:
    target = ws.file("src/app.py", SOURCE)
    output = await ws.run(
        "edit_file", path="src/app.py", old_text='print("hello")', new_text='print("bye")'
    )
    assert not output.failed
    updated = SOURCE.replace('print("hello")', 'print("bye")')
    assert target.read_text() == updated
    assert output.diffs == [Diff(str(target), SOURCE, updated)]
    assert output.locations == [Location(str(target), 2)]
    assert output.text.startswith(f"Edited {target} at line 2")


async def test_edit_file_ambiguous_match_says_how_many_and_where(ws: Workspace) -> None:
    target = ws.file("src/app.py", SOURCE)
    output = await ws.run("edit_file", path="src/app.py", old_text="return 0", new_text="pass")
    assert output.failed
    assert "occurs 2 times" in output.text
    assert "lines 3, 7" in output.text
    assert "more surrounding lines" in output.text
    assert target.read_text() == SOURCE
    assert not output.diffs


async def test_edit_file_missing_match_points_at_whitespace_difference(ws: Workspace) -> None:
    target = ws.file("src/app.py", SOURCE)
    output = await ws.run(
        "edit_file",
        path="src/app.py",
        old_text='def main():\n  print("hello")',
        new_text="def main():\n  pass",
    )
    assert output.failed
    assert f"old_text was not found in {target}" in output.text
    assert "whitespace" in output.text
    assert "except for whitespace/indentation is at line 1" in output.text
    assert '2 |     print("hello")' in output.text
    assert "read_file" in output.text
    assert target.read_text() == SOURCE


async def test_edit_file_missing_match_shows_the_closest_line(ws: Workspace) -> None:
    ws.file("src/app.py", SOURCE)
    output = await ws.run("edit_file", path="src/app.py", old_text='print("helo")', new_text="pass")
    assert output.failed
    assert "closest line to" in output.text
    assert '2 |     print("hello")' in output.text

    nothing_like = await ws.run(
        "edit_file", path="src/app.py", old_text="zzzzzzzzzz qqqq", new_text="pass"
    )
    assert nothing_like.failed and "not found" in nothing_like.text
    assert "closest" not in nothing_like.text


async def test_edit_file_other_failures(ws: Workspace) -> None:
    ws.file("a.txt", "abc\n")
    missing = await ws.run("edit_file", path="nope.txt", old_text="a", new_text="b")
    assert missing.failed and "File not found" in missing.text and "write_file" in missing.text
    empty = await ws.run("edit_file", path="a.txt", old_text="", new_text="b")
    assert empty.failed and "old_text is empty" in empty.text
    same = await ws.run("edit_file", path="a.txt", old_text="abc", new_text="abc")
    assert same.failed and "identical" in same.text


class ExactFiles:
    """A `FileAccess` that keeps line ends as they are (as a client's `fs/*` does)."""

    async def read_text(self, path: str, signal: TurnSignal) -> str:
        return (await anyio.Path(path).read_bytes()).decode()

    async def write_text(self, path: str, content: str, signal: TurnSignal) -> None:
        await anyio.Path(path).write_bytes(content.encode())


async def test_edit_file_matches_crlf_files_written_with_lf(ws: Workspace) -> None:
    target = ws.root / "dos.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    tools = {t.name: t for t in builtin_tools(ws.path_roots, ExactFiles(), LocalCommands())}
    output = await tools["edit_file"].run(
        {"path": "dos.txt", "old_text": "one\ntwo", "new_text": "1\n2"},
        a_call(),
        TurnCancellation().signal,
    )
    assert not output.failed, output.text
    assert target.read_bytes() == b"1\r\n2\r\nthree\r\n"
    assert output.locations == [Location(str(target), 1)]


MEDIAN = '''def mean(values):
    return sum(values) / len(values)


def median(values):
    """The median."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def tail():
    pass
'''


async def test_edit_file_missing_match_shows_the_closest_block_to_copy_from(
    ws: Workspace,
) -> None:
    """A guessed parameter name (what Qwen2.5-Coder-1.5B wrote in the e2e run): the closest
    line's block up to the next blank line, exactly as in the file, without line numbers."""
    ws.file("stats.py", MEDIAN)
    output = await ws.run(
        "edit_file", path="stats.py", old_text="def median(lst):", new_text="def median(x):"
    )
    assert output.failed
    assert "     5 | def median(values):" in output.text
    shown = (
        "Lines 5-8 exactly as they are in the file (copy old_text from here, without line "
        'numbers):\ndef median(values):\n    """The median."""\n    ordered = sorted(values)\n'
        "    return ordered[len(ordered) // 2]\nCall edit_file again"
    )
    assert shown in output.text
    # What it shows is copied as old_text: the edit then applies.
    block = output.text.split("without line numbers):\n")[1].split("\nCall edit_file again")[0]
    fixed = await ws.run("edit_file", path="stats.py", old_text=block, new_text="pass")
    assert not fixed.failed, fixed.text


async def test_edit_file_missing_match_block_is_bounded(ws: Workspace) -> None:
    long_function = "def f(values):\n" + "".join(f"    x{i} = {i}\n" for i in range(40))
    ws.file("long.py", long_function)
    output = await ws.run("edit_file", path="long.py", old_text="def f(lst):", new_text="")
    assert output.failed
    assert "Lines 1-15 exactly as they are" in output.text
    assert "x13 = 13\nCall edit_file again" in output.text and "x14" not in output.text


async def test_edit_file_shows_the_edited_lines_and_the_ones_after(ws: Workspace) -> None:
    """What Qwen2.5-Coder-1.5B did in the e2e run: the first line of a function replaced by a
    whole function. The result shows the new lines and the 3 after them, where the old body
    now is."""
    target = ws.file("stats.py", MEDIAN)
    new = "def median(values):\n    return sorted(values)[len(values) // 2]"
    output = await ws.run(
        "edit_file", path="stats.py", old_text="def median(values):", new_text=new
    )
    assert not output.failed
    assert output.text == (
        f"Edited {target} at line 5: replaced 1 line with 2 lines\n"
        "Lines 5-9 now read:\n"
        "def median(values):\n"
        "    return sorted(values)[len(values) // 2]\n"
        '    """The median."""\n'
        "    ordered = sorted(values)\n"
        "    return ordered[len(ordered) // 2]"
    )
