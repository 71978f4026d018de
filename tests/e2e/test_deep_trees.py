"""A 1,100-level-deep tree and a chain of 1,100 symbolic links fail one tool call at most,
never the prompt, through the real process (before: `RecursionError` in Python 3.11's
`realpath`, which recurses once per link, answered the prompt -32603). grep, glob and
list_dir have their own tests (they run on ripgrep)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.scripted_model import script
from tests.support.tool_client import DONE, SANDBOXED, agent_session, call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]

DEPTH = 1_100


@pytest.fixture
def deep_ws(ws: Path) -> Iterator[Path]:
    """`ws` with `d/d/.../d/f.txt` (1,100 levels) and `l1099 -> ... -> l0 -> f0.txt`; removed
    with `rm -rf` afterwards (pytest's own cleanup recurses and would fail on it)."""
    directory = ws
    for _ in range(DEPTH):  # os.makedirs recurses too
        directory = directory / "d"
        directory.mkdir()
    (directory / "f.txt").write_text("hello\n")
    (ws / "f0.txt").write_text("chain\n")
    previous = "f0.txt"
    for i in range(DEPTH):
        os.symlink(previous, ws / f"l{i}")
        previous = f"l{i}"
    (ws / ".git").mkdir()
    (ws / "AGENTS.md").symlink_to(previous)  # the instructions file is the chain's end
    yield ws
    subprocess.run(["rm", "-rf", str(ws)], check=True)


async def test_deep_trees_and_link_chains_fail_one_call_at_most(
    tmp_path: Path, deep_ws: Path
) -> None:
    deep = "/".join(["d"] * DEPTH)
    new_deep = "/".join(["n"] * DEPTH)
    last = f"l{DEPTH - 1}"
    calls = [
        call("read_file", path=f"{deep}/f.txt"),
        call("edit_file", path=f"{deep}/f.txt", old_text="hello", new_text="bye"),
        call("write_file", path=f"{new_deep}/g.txt", content="x"),
        call("read_file", path=last),
        call("write_file", path=last, content="y"),
        call("edit_file", path=last, old_text="chain", new_text="c"),
    ]
    spec = script(tmp_path, *calls, DONE)
    async with agent_session(deep_ws, spec, "--mode", "bypass", env=SANDBOXED) as s:
        assert await s.prompt() == "end_turn"
        # A session whose cwd is the tree's bottom starts and answers too.
        bottom = str(deep_ws / deep)
        sid = (await s.conn.new_session(cwd=bottom, mcp_servers=[])).session_id
        assert sid
    finished = s.client.finished()
    assert [status for _, status, _ in finished] == ["completed"] * 3 + ["failed"] * 3
    assert finished[0][2].startswith("hello")
    for _, _, text in finished[3:]:
        assert "more than 40 symbolic links" in text
    assert (deep_ws / "f0.txt").read_text() == "chain\n"
