"""The path roots (`PathRoots`, acp_server/tools/workspace.py) through the built-in tools: `../`,
absolute paths elsewhere and symlinks pointing out are refused as failed outputs; additional
directories count as the workspace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.tool_workspace import Workspace

pytestmark = pytest.mark.anyio


# The path roots -------------------------------------------------------------------------------


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


def test_real_path_matches_realpath_and_refuses_loops_and_long_chains(tmp_path: Path) -> None:
    from acp_server.tools.workspace import MAX_LINKS, TooManyLinks, real_path

    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "f").write_text("x")
    (tmp_path / "lb").symlink_to("a/b")
    (tmp_path / "abs").symlink_to("/etc")
    (tmp_path / "lf").symlink_to("lb/c/../c/f")
    (tmp_path / "a" / "b" / "up").symlink_to("../..")
    (tmp_path / "dangling").symlink_to("missing/x")
    for path in (
        "lb/c/f",
        "abs/passwd",
        "lf",
        "a/b/up/a/b/c",
        "dangling/y",
        "nope/../abs/x",  # a missing component does not stop links after `..`
        "a/b/c/f/..",
        "lb/..",
        "a/./b//c/",
        "lb/c/../../b/up/lf",
    ):
        assert real_path(str(tmp_path / path)) == os.path.realpath(tmp_path / path), path
    (tmp_path / "loop").symlink_to("loop")
    previous = "a"
    for i in range(MAX_LINKS + 1):
        (tmp_path / f"l{i}").symlink_to(previous)
        previous = f"l{i}"
    assert real_path(str(tmp_path / f"l{MAX_LINKS - 1}")) == str(tmp_path / "a")
    for refused in ("loop", f"l{MAX_LINKS}"):
        with pytest.raises(TooManyLinks):
            real_path(str(tmp_path / refused))
