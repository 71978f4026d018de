"""list_dir (acp_server/tools/builtin/list_dir.py) on real files in a temporary workspace:
entries sorted with directories marked, capped with a note, and failures that say what the path
is."""

from __future__ import annotations

import pytest

from acp_server.cancellation import TurnCancellation
from acp_server.tools.base import Location
from acp_server.tools.builtin.list_dir import ListDir
from tests.support.tool_call import a_call
from tests.support.tool_workspace import Workspace

pytestmark = pytest.mark.anyio


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
    capped = await ListDir(ws.path_roots, max_entries=10).run(
        {"path": "many"}, a_call(), TurnCancellation().signal
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
