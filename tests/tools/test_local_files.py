"""The check and the open act on the same object: a workspace directory swapped for a symlink
to the outside while the tools run never carries a read, write, search or listing outside.

The swap runs in a separate process (true parallelism) and uses `renameat2(RENAME_EXCHANGE)`,
so the directory name always exists and is a symlink half of the time: before the tools opened
component by component with O_NOFOLLOW, from 1 in 100 to 1 in 5 calls crossed (checked at
realpath time, opened through the symlink), depending on the machine's load.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_server.cancellation import TurnCancellation
from acp_server.tools.base import Tool, ToolOutput
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles, open_checked
from acp_server.tools.workspace import NotRegularFile, PathChanged, PathRoots
from tests.support.hostile_files import SWAPPER, has_rename_exchange
from tests.support.tool_call import a_call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="renameat2 and O_PATH are Linux's"),
]

ITERATIONS = 3000
SECRET = "SECRET-OUTSIDE"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A directory with no symlink on its path (paths on the wire are resolved)."""
    return tmp_path.resolve()


class Race:
    """ws/d (a real directory) and ws/.d-link (a symlink to outside/) trade places nonstop."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = (tmp_path / "ws").resolve()
        self.outside = (tmp_path / "outside").resolve()
        (self.root / "d").mkdir(parents=True)
        self.outside.mkdir()
        (self.root / "d" / "f.txt").write_text("inside\n")
        (self.outside / "f.txt").write_text(f"{SECRET}\n")
        (self.outside / "outside-only.txt").write_text(f"{SECRET}\n")
        (self.root / ".d-link").symlink_to(self.outside)
        path_roots = PathRoots(str(self.root))
        self.tools: dict[str, Tool] = {
            t.name: t for t in builtin_tools(path_roots, LocalFiles(), LocalCommands())
        }

    async def run(self, name: str, **arguments: Any) -> ToolOutput:
        return await self.tools[name].run(arguments, a_call(), TurnCancellation().signal)

    def written_outside(self) -> bool:
        target = self.outside / "new.txt"
        if target.exists():
            target.unlink()
            return True
        return False


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[Race]:
    if not has_rename_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not supported here")
    race = Race(tmp_path)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(race.root / "d"), str(race.root / ".d-link")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "swapping\n"
        yield race
        assert swapper.poll() is None, "the swapper stopped early"
    finally:
        swapper.kill()
        swapper.wait()
        swapper.stdout.close()


async def test_no_read_write_search_or_listing_crosses_a_racing_symlink_swap(
    swapping: Race,
) -> None:
    crossings = {"read_file": 0, "write_file": 0, "edit_file": 0, "grep": 0, "list_dir": 0}
    refused = 0
    for _ in range(ITERATIONS):
        outputs = {
            "read_file": await swapping.run("read_file", path="d/f.txt"),
            "write_file": await swapping.run("write_file", path="d/new.txt", content="x\n"),
        }
        crossings["write_file"] += swapping.written_outside()
        outputs["edit_file"] = await swapping.run(
            "edit_file", path="d/f.txt", old_text=SECRET, new_text="EDITED"
        )
        outputs["grep"] = await swapping.run("grep", pattern=SECRET, path="d")
        outputs["list_dir"] = await swapping.run("list_dir", path="d")
        for name, output in outputs.items():
            if name == "list_dir":
                crossings[name] += "outside-only.txt" in output.text
            elif name == "edit_file":
                crossings[name] += "EDITED" in (swapping.outside / "f.txt").read_text()
            elif name == "grep":
                crossings[name] += f": {SECRET}" in output.text  # a match line, not the pattern
            else:
                crossings[name] += SECRET in output.text
            refused += output.failed and "changed while it was being opened" in output.text
    assert crossings == dict.fromkeys(crossings, 0)
    # The race was live: the tools met the symlink at open time (and refused it) many times.
    assert refused > 0
    assert (swapping.outside / "f.txt").read_text() == f"{SECRET}\n"


# open_checked ---------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "dir").mkdir()
    (root / "dir" / "file.txt").write_text("text\n")
    (root / "link-dir").symlink_to(root / "dir")
    (root / "link-file").symlink_to(root / "dir" / "file.txt")
    os.mkfifo(root / "fifo")
    return root


def test_a_symlink_anywhere_on_the_path_is_refused_not_followed(tree: Path) -> None:
    with pytest.raises(PathChanged, match="link-dir is now a symbolic link"):
        open_checked(str(tree / "link-dir" / "file.txt"), os.O_RDONLY)
    with pytest.raises(PathChanged, match="link-file is now a symbolic link"):
        open_checked(str(tree / "link-file"), os.O_RDONLY)
    with pytest.raises(PathChanged):
        open_checked(str(tree / "link-file"), os.O_WRONLY | os.O_CREAT)
    assert (tree / "dir" / "file.txt").read_text() == "text\n"


def test_fifos_and_devices_are_refused_without_opening_or_blocking(tree: Path) -> None:
    # No writer on the FIFO: a plain open for reading would block forever.
    with pytest.raises(NotRegularFile, match="FIFO"):
        open_checked(str(tree / "fifo"), os.O_RDONLY)
    with pytest.raises(NotRegularFile, match="FIFO"):
        open_checked(str(tree / "fifo"), os.O_WRONLY | os.O_CREAT)
    with pytest.raises(NotRegularFile, match="character device"):
        open_checked("/dev/null", os.O_RDONLY)


def test_regular_files_directories_and_new_parents_open(tree: Path) -> None:
    fd = open_checked(str(tree / "dir" / "file.txt"), os.O_RDONLY)
    try:
        assert os.read(fd, 100) == b"text\n"
    finally:
        os.close(fd)
    fd = open_checked(str(tree / "dir"), os.O_RDONLY | os.O_DIRECTORY)
    os.close(fd)
    fd = open_checked(
        str(tree / "a" / "b" / "new.txt"), os.O_WRONLY | os.O_CREAT, make_parents=True
    )
    os.close(fd)
    assert (tree / "a" / "b" / "new.txt").is_file()
    with pytest.raises(FileNotFoundError):
        open_checked(str(tree / "missing" / "x.txt"), os.O_WRONLY | os.O_CREAT)
    with pytest.raises(OSError) as raised:
        open_checked(str(tree / "dir" / "file.txt" / "below"), os.O_RDONLY)
    assert raised.value.errno == errno.ENOTDIR
    with pytest.raises(ValueError, match="not a resolved absolute path"):
        open_checked(str(tree / "dir" / ".." / "dir"), os.O_RDONLY)


# The tools on special files and NUL bytes ------------------------------------------------------


async def test_file_tools_refuse_a_fifo_at_once(tree: Path) -> None:
    tools = {t.name: t for t in builtin_tools(PathRoots(str(tree)), LocalFiles(), LocalCommands())}
    signal = TurnCancellation().signal
    for name, arguments in [
        ("read_file", {"path": "fifo"}),
        ("write_file", {"path": "fifo", "content": "x"}),
        ("edit_file", {"path": "fifo", "old_text": "a", "new_text": "b"}),
    ]:
        output = await tools[name].run(arguments, a_call(), signal)
        assert output.failed, name
        assert (
            output.text
            == f"Refused: {tree}/fifo is a FIFO (named pipe), not a regular file; "
            + ("only regular files are used")
        )
    grep = await tools["grep"].run({"pattern": "text"}, a_call(), signal)  # walks past the FIFO
    assert not grep.failed and grep.text.endswith(f"{tree}/dir/file.txt:1: text")


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("glob", {"pattern": "src/\0/*.py"}),
        ("glob", {"pattern": "*\0.py"}),
        ("grep", {"pattern": "a\0b"}),
        ("grep", {"pattern": "x", "path": "a\0b"}),
        ("read_file", {"path": "a\0b"}),
        ("write_file", {"path": "a\0b", "content": "x"}),
        ("list_dir", {"path": "\0"}),
    ],
)
async def test_a_nul_byte_fails_only_that_call(
    root: Path, name: str, arguments: dict[str, Any]
) -> None:
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("a\n")
    tools = {t.name: t for t in builtin_tools(PathRoots(str(root)), LocalFiles(), LocalCommands())}
    tool = tools[name]
    tool.title(arguments)  # titles and locations never raise: the loop calls them first
    tool.locations(arguments)
    output = await tool.run(arguments, a_call(), TurnCancellation().signal)
    if "\0" in str(arguments.get("path", "")) or "/\0/" in str(arguments.get("pattern", "")):
        assert output.failed and "contains a NUL byte" in output.text
    else:
        assert not output.failed  # a NUL in a name pattern or a regex just matches nothing
    assert os.listdir(root) == ["src"]
