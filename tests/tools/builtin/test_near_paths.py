"""A path that does not exist names the files of the same name ("no src/users.py; users.py
exists"), in `read_file`, `edit_file` and a `write_file` that creates a file; the search is
bounded and follows no link."""

from __future__ import annotations

import os

import pytest

from acp_server.tools.builtin import near_paths
from acp_server.tools.builtin.near_paths import near_paths_note
from tests.support.tool_workspace import Workspace

pytestmark = pytest.mark.anyio


async def test_read_file_of_a_made_up_path_names_the_real_one(ws: Workspace) -> None:
    ws.file("users.py", "NAMES = []\n")
    missing = await ws.run("read_file", path="src/users.py")
    assert missing.failed
    assert missing.text == f"File not found: {ws.root}/src/users.py; users.py exists"


async def test_edit_file_of_a_made_up_path_names_every_file_of_that_name(ws: Workspace) -> None:
    ws.file("app/users.py", "a\n")
    ws.file("lib/deep/users.py", "b\n")
    missing = await ws.run("edit_file", path="users.py", old_text="a", new_text="c")
    assert missing.failed
    assert "; app/users.py and lib/deep/users.py exist (to create a file, use write_file)" in (
        missing.text
    )


async def test_a_new_file_named_like_an_existing_one_says_so(ws: Workspace) -> None:
    ws.file("users.py", "a\n")
    created = await ws.run("write_file", path="src/users.py", content="b\n")
    assert not created.failed
    assert created.text.endswith("; users.py exists: if you meant that file, write to it instead")
    plain = await ws.run("write_file", path="src/other.py", content="b\n")
    assert "exists" not in plain.text


async def test_no_file_of_that_name_adds_nothing(ws: Workspace) -> None:
    missing = await ws.run("read_file", path="nope.txt")
    assert missing.text == f"File not found: {ws.root}/nope.txt"


def test_the_search_is_bounded_skips_bulky_folders_and_follows_no_link(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "node_modules", "x"))
    open(os.path.join(root, "node_modules", "x", "users.py"), "w").close()
    outside = os.path.join(root, "..", "elsewhere")
    os.makedirs(outside, exist_ok=True)
    open(os.path.join(outside, "users.py"), "w").close()
    os.symlink(outside, os.path.join(root, "linked"))
    assert near_paths_note(root, os.path.join(root, "users.py")) == ""
    for number in range(50):
        open(os.path.join(root, f"f{number}.txt"), "w").close()
    os.makedirs(os.path.join(root, "zz"))
    open(os.path.join(root, "zz", "users.py"), "w").close()
    assert near_paths_note(root, os.path.join(root, "users.py")) == "; zz/users.py exists"
    monkeypatch.setattr(near_paths, "MAX_ENTRIES", 10)
    assert near_paths_note(root, os.path.join(root, "users.py")) == ""  # stopped at the cap
