"""The `[tools]` budget of the config file reaches the real `acp-server` process: what the
client and the model get of a long command output, a long file and a broad search is capped,
and says how to get the rest."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.scripted_model import script
from tests.support.tool_client import DONE, agent_session, call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux only"),
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))


async def test_the_config_files_tools_budget_caps_every_result(tmp_path: Path, ws: Path) -> None:
    config = tmp_path / "xdg" / "acp-server" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[tools]\nmax_result_bytes = 2048\nmax_search_results = 10\n")
    (ws / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))
    spec = script(
        tmp_path,
        call("bash", command="seq 1 50000"),
        call("read_file", path="big.txt"),
        call("grep", pattern="row 1"),
        DONE,
    )
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "ACP_SERVER_SANDBOXED": "1"}
    async with agent_session(ws, spec, "--mode", "bypass", env=env) as s:
        assert await s.prompt() == "end_turn"
    [bash, read, grep] = [text for _, _, text in s.client.finished()]
    assert all(len(text.encode()) <= 2048 for text in (bash, read, grep))
    assert bash.startswith("1\n2\n") and bash.endswith("50000\n[exit code: 0]")
    assert "cut from the middle; to see all of it, redirect the output to a file" in bash
    assert read.startswith("row 1\nrow 2\n") and "call read_file with offset=" in read
    assert grep.endswith("[showing 10 of 1111 matches in 1 file; narrow the pattern or path]")
