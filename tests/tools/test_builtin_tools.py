"""The built-in tools on real files in a temporary workspace, and `bash` on real processes.

Every path goes through the sandbox (`../`, absolute paths elsewhere and symlinks pointing out
are refused as failed outputs), arguments are validated into failed outputs naming the
argument, the failure messages help the model retry, and the turn signal stops everything:
an already aborted signal before any side effect, a running command with its whole process
group.
"""

from __future__ import annotations

import ctypes
import os
import signal as signals
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, TurnSignal, UserCancel
from acp_server.process import become_subreaper
from acp_server.tools.base import Diff, Location, PlanItem, Tool, ToolOutput
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.builtin.files import ListDir, ReadFile
from acp_server.tools.builtin.search import Glob, Grep
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.workspace import Sandbox

pytestmark = pytest.mark.anyio

_PR_SET_CHILD_SUBREAPER = 36

STABLE_NAMES = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
    "bash",
    "todo_write",
]


class Workspace:
    """A workspace directory with a sibling directory outside it, and the tools bound to it."""

    def __init__(self, tmp_path: Path, additional: list[Path] | None = None) -> None:
        self.root = (tmp_path / "ws").resolve()
        self.outside = (tmp_path / "outside").resolve()
        self.root.mkdir(exist_ok=True)
        self.outside.mkdir(exist_ok=True)
        (self.outside / "secret.txt").write_text("top secret\n")
        self.sandbox = Sandbox(str(self.root), [str(d) for d in additional or []])
        self.tools: dict[str, Tool] = {
            tool.name: tool for tool in builtin_tools(self.sandbox, LocalFiles(), LocalCommands())
        }

    def file(self, relative: str, content: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        return path

    async def run(
        self, name: str, signal: TurnSignal | None = None, **arguments: Any
    ) -> ToolOutput:
        return await self.tools[name].run(arguments, signal or TurnCancellation().signal)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def _set_subreaper(on: bool) -> None:
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)


@pytest.fixture(autouse=True, scope="module")
def subreaper() -> Iterator[None]:
    """As the server does at start-up (orphaned `sleep`s are then reaped at once instead of
    lingering as zombies of init); undone afterwards for the other test modules."""
    enabled = become_subreaper()
    yield
    if enabled:
        _set_subreaper(False)


def aborted_signal() -> TurnSignal:
    cancellation = TurnCancellation()
    cancellation.abort(UserCancel())
    return cancellation.signal


# The tool set ---------------------------------------------------------------------------------


def test_the_stable_names_kinds_and_schemas(ws: Workspace) -> None:
    tools = builtin_tools(ws.sandbox, LocalFiles(), LocalCommands())
    assert [tool.name for tool in tools] == STABLE_NAMES
    kinds = {tool.name: tool.kind for tool in tools}
    assert kinds == {
        "read_file": "read",
        "write_file": "edit",
        "edit_file": "edit",
        "list_dir": "read",
        "glob": "search",
        "grep": "search",
        "bash": "execute",
        "todo_write": "think",
    }
    arguments = {
        "read_file": {"path", "offset", "limit"},
        "write_file": {"path", "content"},
        "edit_file": {"path", "old_text", "new_text"},
        "list_dir": {"path"},
        "glob": {"pattern"},
        "grep": {"pattern", "path"},
        "bash": {"command", "timeout_ms"},
        "todo_write": {"entries"},
    }
    for tool in tools:
        schema = tool.parameters
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["properties"]) == arguments[tool.name]
        assert set(schema["required"]) <= set(schema["properties"])
        assert len(tool.description) > 80


async def test_titles_and_locations_never_fail(ws: Workspace) -> None:
    root = str(ws.root)
    t = ws.tools
    assert t["read_file"].title({"path": "src/x.py"}) == "Read src/x.py"
    assert t["read_file"].title({"path": f"{root}/src/x.py"}) == "Read src/x.py"
    assert t["read_file"].title({"path": "x.py", "offset": 5, "limit": 10}) == (
        "Read x.py (lines 5-14)"
    )
    assert t["read_file"].locations({"path": "src/x.py", "offset": 7}) == [
        Location(f"{root}/src/x.py", 7)
    ]
    assert t["write_file"].title({"path": "a.txt"}) == "Write a.txt"
    assert t["edit_file"].title({"path": "src/x.py"}) == "Edit src/x.py"
    assert t["edit_file"].locations({"path": "../outside/secret.txt"}) == [
        Location(str(ws.outside / "secret.txt"))
    ]
    assert t["list_dir"].title({}) == "List ."
    assert t["list_dir"].locations({}) == [Location(root)]
    assert t["glob"].title({"pattern": "**/*.py"}) == "Find `**/*.py`"
    assert t["grep"].title({"pattern": "def main", "path": "src"}) == "Search `def main` in src"
    assert t["bash"].title({"command": "make test"}) == "Run `make test`"
    long_title = t["bash"].title({"command": "echo " + "x" * 200})
    assert long_title.startswith("Run `echo xxx") and long_title.endswith("…`")
    assert len(long_title) < 80
    assert t["bash"].title({"command": "make\nmake install"}) == "Run `make…`"
    assert t["todo_write"].title({"entries": []}) == "Update plan"
    for tool in t.values():  # garbage in: a title and locations all the same
        assert tool.title({"path": 3, "pattern": None, "command": ["x"]})
        assert list(tool.locations({"path": 3})) in ([], [Location(root)])


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("read_file", {}, "missing required argument `path`"),
        ("read_file", {"path": 3}, "Expected `str`, got `int` (argument `path`)"),
        ("read_file", {"path": "a", "offset": 0}, "(argument `offset`)"),
        ("read_file", {"path": "a", "limit": "ten"}, "(argument `limit`)"),
        ("read_file", {"path": "a", "bogus": 1}, "unknown argument `bogus`"),
        ("write_file", {"path": "a"}, "missing required argument `content`"),
        ("edit_file", {"path": "a", "old_text": "x"}, "missing required argument `new_text`"),
        ("glob", {"pattern": None}, "(argument `pattern`)"),
        ("grep", {"pattern": "x", "path": 1}, "(argument `path`)"),
        ("bash", {"command": "true", "timeout_ms": -5}, "(argument `timeout_ms`)"),
        ("todo_write", {"entries": "do it"}, "(argument `entries`)"),
        (
            "todo_write",
            {"entries": [{"priority": "high"}]},
            "missing required field `content` (argument `entries[0]`)",
        ),
        (
            "todo_write",
            {"entries": [{"content": "x", "status": "done"}]},
            "(argument `entries[0].status`)",
        ),
    ],
)
async def test_bad_arguments_fail_naming_the_argument(
    ws: Workspace, name: str, arguments: dict[str, Any], expected: str
) -> None:
    output = await ws.tools[name].run(arguments, TurnCancellation().signal)
    assert output.failed
    assert output.text.startswith(f"Invalid arguments for {name}: ")
    assert expected in output.text


# read_file ------------------------------------------------------------------------------------


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
    reader = ReadFile(ws.sandbox, LocalFiles(), max_lines=5, max_bytes=1024)
    output = await reader.run({"path": "big.txt"}, TurnCancellation().signal)
    assert output.text.startswith("1\n2\n3\n4\n5\n[lines 1-5 of 100; output capped at 5 lines")
    assert "offset=6" in output.text

    ws.file("wide.txt", ("x" * 300 + "\n") * 10)
    output = await reader.run({"path": "wide.txt"}, TurnCancellation().signal)
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

SOURCE = """def main():
    print("hello")
    return 0


def helper():
    return 0
"""


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
    tools = {t.name: t for t in builtin_tools(ws.sandbox, ExactFiles(), LocalCommands())}
    output = await tools["edit_file"].run(
        {"path": "dos.txt", "old_text": "one\ntwo", "new_text": "1\n2"}, TurnCancellation().signal
    )
    assert not output.failed, output.text
    assert target.read_bytes() == b"1\r\n2\r\nthree\r\n"
    assert output.locations == [Location(str(target), 1)]


# list_dir -------------------------------------------------------------------------------------


async def test_list_dir_sorted_with_directories_marked(ws: Workspace) -> None:
    ws.file("b.txt", "")
    ws.file("a.txt", "")
    ws.file("sub/inner.txt", "")
    (ws.root / ".hidden").mkdir()
    output = await ws.run("list_dir")
    assert output.text == f"{ws.root}:\n.hidden/\na.txt\nb.txt\nsub/"
    assert output.locations == [Location(str(ws.root))]
    sub = await ws.run("list_dir", path="sub")
    assert sub.text == f"{ws.root}/sub:\ninner.txt"


async def test_list_dir_caps_and_failures(ws: Workspace) -> None:
    for i in range(12):
        ws.file(f"many/{i:02}.txt", "")
    capped = await ListDir(ws.sandbox, max_entries=10).run(
        {"path": "many"}, TurnCancellation().signal
    )
    assert capped.text.splitlines()[1:] == [
        *(f"{i:02}.txt" for i in range(10)),
        "[showing 10 of 12 entries; use glob with a pattern to find the others]",
    ]
    ws.file("f.txt", "x")
    not_dir = await ws.run("list_dir", path="f.txt")
    assert not_dir.failed and "not a directory" in not_dir.text
    missing = await ws.run("list_dir", path="gone")
    assert missing.failed and "Directory not found" in missing.text


# glob -----------------------------------------------------------------------------------------


async def test_glob_recursive_sorted_absolute_and_skipping_git(ws: Workspace) -> None:
    for relative in ["a.py", "src/b.py", "src/deep/er/c.py", "src/d.txt", ".git/hooks/e.py"]:
        ws.file(relative, "")
    output = await ws.run("glob", pattern="**/*.py")
    assert output.text.splitlines() == [
        f"{ws.root}/a.py",
        f"{ws.root}/src/b.py",
        f"{ws.root}/src/deep/er/c.py",
    ]
    one_level = await ws.run("glob", pattern="src/*")
    assert one_level.text.splitlines() == [
        f"{ws.root}/src/b.py",
        f"{ws.root}/src/d.txt",
        f"{ws.root}/src/deep",
    ]
    absolute = await ws.run("glob", pattern=f"{ws.root}/src/**/c.py")
    assert absolute.text == f"{ws.root}/src/deep/er/c.py"
    none = await ws.run("glob", pattern="**/*.rs")
    assert not none.failed and none.text == "No paths match `**/*.rs`"


async def test_glob_drops_symlinks_out_and_refuses_patterns_outside(ws: Workspace) -> None:
    ws.file("in.txt", "")
    (ws.root / "out.txt").symlink_to(ws.outside / "secret.txt")
    (ws.root / "outdir").symlink_to(ws.outside)
    output = await ws.run("glob", pattern="*.txt")
    assert output.text == f"{ws.root}/in.txt"
    through_link = await ws.run("glob", pattern="outdir/*")
    assert through_link.failed and "outside the workspace" in through_link.text
    under_a_wildcard = await ws.run("glob", pattern="*/secret.txt")
    assert under_a_wildcard.text == "No paths match `*/secret.txt`"
    elsewhere = await ws.run("glob", pattern=f"{ws.outside}/*.txt")
    assert elsewhere.failed and "outside the workspace" in elsewhere.text
    parent = await ws.run("glob", pattern="../outside/**")
    assert parent.failed and "outside the workspace" in parent.text


async def test_glob_caps_results(ws: Workspace) -> None:
    for i in range(15):
        ws.file(f"f{i:02}.txt", "")
    output = await Glob(ws.sandbox, max_results=10).run(
        {"pattern": "*.txt"}, TurnCancellation().signal
    )
    lines = output.text.splitlines()
    assert lines[:10] == [f"{ws.root}/f{i:02}.txt" for i in range(10)]
    assert lines[10].startswith("[showing 10 of 15 matches")


# grep -----------------------------------------------------------------------------------------


async def test_grep_matches_as_path_line_text(ws: Workspace) -> None:
    ws.file("src/app.py", SOURCE)
    ws.file("src/notes.md", "TODO: return later\n")
    ws.file(".git/config", "return 0\n")
    (ws.root / "blob.bin").write_bytes(b"\0\x01return 0\n")
    output = await ws.run("grep", pattern=r"return \d")
    assert output.text.splitlines() == [
        f"{ws.root}/src/app.py:3:     return 0",
        f"{ws.root}/src/app.py:7:     return 0",
    ]
    in_file = await ws.run("grep", pattern="(?i)todo", path="src/notes.md")
    assert in_file.text == f"{ws.root}/src/notes.md:1: TODO: return later"
    nothing = await ws.run("grep", pattern="absent", path="src")
    assert not nothing.failed
    assert nothing.text == f"No matches for `absent` in 2 files under {ws.root}/src"


async def test_grep_regex_error_missing_path_and_cap(ws: Workspace) -> None:
    bad = await ws.run("grep", pattern="(unclosed")
    assert bad.failed
    assert "Invalid regular expression '(unclosed'" in bad.text
    assert "missing ), unterminated subpattern" in bad.text
    missing = await ws.run("grep", pattern="x", path="gone")
    assert missing.failed and "Path not found" in missing.text
    ws.file("many.txt", "hit\n" * 20)
    capped = await Grep(ws.sandbox, max_matches=5).run(
        {"pattern": "hit"}, TurnCancellation().signal
    )
    assert len(capped.text.splitlines()) == 6
    assert "showing 5 of 20 matches in 1 file" in capped.text


async def test_grep_skips_files_behind_symlinks_out(ws: Workspace) -> None:
    (ws.root / "link.txt").symlink_to(ws.outside / "secret.txt")
    (ws.root / "linkdir").symlink_to(ws.outside)
    output = await ws.run("grep", pattern="secret")
    assert output.text.startswith("No matches")


# The sandbox ----------------------------------------------------------------------------------


def escapes(ws: Workspace) -> dict[str, str]:
    (ws.root / "link_file").symlink_to(ws.outside / "secret.txt")
    (ws.root / "link_dir").symlink_to(ws.outside)
    return {
        "dotdot": "../outside/secret.txt",
        "absolute": str(ws.outside / "secret.txt"),
        "symlink": "link_file",
    }


ESCAPE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {}),
    ("write_file", {"content": "pwned\n"}),
    ("edit_file", {"old_text": "top secret", "new_text": "pwned"}),
    ("list_dir", {}),
    ("grep", {"pattern": "secret"}),
]


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink"])
@pytest.mark.parametrize(("name", "extra"), ESCAPE_CALLS)
async def test_paths_outside_the_workspace_are_refused(
    ws: Workspace, kind: str, name: str, extra: Mapping[str, Any]
) -> None:
    path = escapes(ws)[kind]
    output = await ws.run(name, path=path, **extra)
    assert output.failed
    assert output.text.startswith(f"Refused: {path} is outside the workspace")
    assert f"allowed roots: {ws.root}" in output.text
    assert "top secret" not in output.text
    assert (ws.outside / "secret.txt").read_text() == "top secret\n"


async def test_writing_through_a_symlinked_directory_is_refused(ws: Workspace) -> None:
    escapes(ws)
    output = await ws.run("write_file", path="link_dir/new.txt", content="x")
    assert output.failed and "outside the workspace" in output.text
    assert not (ws.outside / "new.txt").exists()


async def test_additional_directories_are_part_of_the_workspace(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "lib.txt").write_text("shared\n")
    ws = Workspace(tmp_path, additional=[extra])
    read = await ws.run("read_file", path=str(extra / "lib.txt"))
    assert read.text == "shared\n"
    via_dotdot = await ws.run("read_file", path="../extra/lib.txt")
    assert via_dotdot.text == "shared\n"
    written = await ws.run("write_file", path=str(extra / "new.txt"), content="x")
    assert not written.failed and (extra / "new.txt").read_text() == "x"
    found = await ws.run("glob", pattern=f"{extra}/*.txt")
    assert found.text.splitlines() == [f"{extra}/lib.txt", f"{extra}/new.txt"]
    outside = await ws.run("read_file", path=str(ws.outside / "secret.txt"))
    assert outside.failed and f"allowed roots: {ws.root}, {extra}" in outside.text


# bash -----------------------------------------------------------------------------------------


async def test_bash_output_and_exit_code(ws: Workspace) -> None:
    ws.file("here.txt", "")
    ok = await ws.run("bash", command="ls && echo done")
    assert not ok.failed
    assert ok.text == "here.txt\ndone\n[exit code: 0]"
    assert ok.terminal_id is None

    bad = await ws.run("bash", command="echo out; echo err >&2; exit 3")
    assert bad.failed
    assert bad.text == "out\nstderr:\nerr\n[exit code: 3]"

    quiet = await ws.run("bash", command="true")
    assert quiet.text == "(no output)\n[exit code: 0]"


async def test_bash_times_out(ws: Workspace) -> None:
    started = time.monotonic()
    output = await ws.run("bash", command="echo started; sleep 5", timeout_ms=300)
    elapsed = time.monotonic() - started
    assert output.failed
    assert "timed out after 0.3 s" in output.text
    assert elapsed < 3


def _gone(pid: int) -> bool:
    """True if `pid` no longer exists (a zombie still counts as existing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_bash_cancelled_by_the_signal_kills_the_whole_group(ws: Workspace) -> None:
    pids_file = ws.root / "pids"
    command = f"echo $$ > {pids_file}; sleep 300 & echo $! >> {pids_file}; "
    command += f"sleep 300 & echo $! >> {pids_file}; wait"
    cancellation = TurnCancellation()

    async def cancel_soon() -> None:
        await anyio.sleep(0.2)
        cancellation.abort(UserCancel())

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_soon)
        with pytest.raises(TurnAborted):
            await ws.run("bash", signal=cancellation.signal, command=command)
    assert time.monotonic() - started < 3
    pids = [int(line) for line in pids_file.read_text().split()]
    assert len(pids) == 3
    alive = [pid for pid in pids if not _gone(pid)]
    if alive:  # clean up before failing
        for pid in alive:
            os.kill(pid, signals.SIGKILL)
    assert alive == []


async def test_bash_with_an_empty_command_fails(ws: Workspace) -> None:
    output = await ws.run("bash", command="  ")
    assert output.failed and "command is empty" in output.text


# todo_write -----------------------------------------------------------------------------------


async def test_todo_write_returns_the_plan(ws: Workspace) -> None:
    output = await ws.run(
        "todo_write",
        entries=[
            {"content": "Read the code", "status": "completed"},
            {"content": "Fix the bug", "priority": "high", "status": "in_progress"},
            {"content": "Run the tests"},
        ],
    )
    assert not output.failed
    assert output.plan == [
        PlanItem("Read the code", "medium", "completed"),
        PlanItem("Fix the bug", "high", "in_progress"),
        PlanItem("Run the tests", "medium", "pending"),
    ]
    assert output.text.splitlines() == [
        "Plan updated: 3 entries (1 completed, 1 in progress, 1 pending)",
        "[x] Read the code",
        "[~] Fix the bug (high priority)",
        "[ ] Run the tests",
    ]
    cleared = await ws.run("todo_write", entries=[])
    assert cleared.plan == [] and cleared.text == "Plan cleared."
    blank = await ws.run("todo_write", entries=[{"content": "ok"}, {"content": "  "}])
    assert blank.failed and "entries[1].content is empty" in blank.text
    assert blank.plan is None


# Cancellation before any work -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"path": "a.txt"}),
        ("write_file", {"path": "new.txt", "content": "x"}),
        ("edit_file", {"path": "a.txt", "old_text": "a", "new_text": "b"}),
        ("list_dir", {}),
        ("glob", {"pattern": "**"}),
        ("grep", {"pattern": "a"}),
        ("bash", {"command": "touch marker"}),
        ("todo_write", {"entries": [{"content": "x"}]}),
        ("read_file", {}),  # even bad arguments: the abort comes first
    ],
)
async def test_an_aborted_signal_raises_before_any_side_effect(
    ws: Workspace, name: str, arguments: dict[str, Any]
) -> None:
    ws.file("a.txt", "a\n")
    before = sorted(p.name for p in ws.root.iterdir())
    with pytest.raises(TurnAborted):
        await ws.tools[name].run(arguments, aborted_signal())
    assert sorted(p.name for p in ws.root.iterdir()) == before
    assert (ws.root / "a.txt").read_text() == "a\n"
