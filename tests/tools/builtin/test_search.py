"""glob and grep (acp_server/tools/builtin/search.py) on real files: sorted, capped, and never
following a symlink out of the workspace.
"""

from __future__ import annotations

import pytest

from acp_server.cancellation import TurnCancellation
from acp_server.tools.builtin.search import Glob, Grep
from tests.support.tool_call import a_call
from tests.support.tool_workspace import SOURCE, Workspace

pytestmark = pytest.mark.anyio


async def test_glob_recursive_sorted_absolute_and_skipping_git(ws: Workspace) -> None:
    for relative in ["a.py", "src/b.py", "src/deep/er/c.py", "src/d.txt", ".git/hooks/e.py"]:
        ws.file(relative, "")
    output = await ws.run("glob", pattern="**/*.py")
    assert output.text.splitlines() == [
        f"{ws.root}/a.py",
        f"{ws.root}/src/b.py",
        f"{ws.root}/src/deep/er/c.py",
    ]
    one_level = await ws.run("glob", pattern="src/*")  # files only: not src/deep
    assert one_level.text.splitlines() == [f"{ws.root}/src/b.py", f"{ws.root}/src/d.txt"]
    literal = await ws.run("glob", pattern="src/deep")  # no wildcard: the path, if it is there
    assert literal.text == f"{ws.root}/src/deep"
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
    output = await Glob(ws.path_roots, max_results=10).run(
        {"pattern": "*.txt"}, a_call(), TurnCancellation().signal
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
    assert nothing.text == f"No matches for `absent` in {ws.root}/src"


async def test_grep_regex_error_missing_path_and_cap(ws: Workspace) -> None:
    bad = await ws.run("grep", pattern="(unclosed")
    assert bad.failed
    assert "Invalid regular expression '(unclosed'" in bad.text
    assert "regex parse error" in bad.text and "unclosed group" in bad.text
    look_around = await ws.run("grep", pattern="(?<=a)b")  # not in ripgrep's linear engine
    assert look_around.failed and "look-around" in look_around.text
    missing = await ws.run("grep", pattern="x", path="gone")
    assert missing.failed and "Path not found" in missing.text
    ws.file("many.txt", "hit\n" * 20)
    capped = await Grep(ws.path_roots, max_matches=5).run(
        {"pattern": "hit"}, a_call(), TurnCancellation().signal
    )
    assert len(capped.text.splitlines()) == 6
    assert "showing 5 of 20 matches in 1 file" in capped.text


async def test_grep_skips_files_behind_symlinks_out(ws: Workspace) -> None:
    (ws.root / "link.txt").symlink_to(ws.outside / "secret.txt")
    (ws.root / "linkdir").symlink_to(ws.outside)
    output = await ws.run("grep", pattern="secret")
    assert output.text.startswith("No matches")
