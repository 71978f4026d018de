"""Every tool result sent to the model is capped and says what was cut and how to get the rest
(acp_server/tools/budget.py): read_file by window (offset), grep and glob with their totals,
list_dir, bash keeping the head and the tail of its output, and the `[tools]` table that sets
the budget. The agent loop's last guard for any tool (MCP, subagents, a denial's reason):
tests/agent/test_output_budgets.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from acp_server.cancellation import TurnCancellation
from acp_server.config import load_config
from acp_server.models.base import ModelConfigError
from acp_server.process import become_subreaper
from acp_server.tools.base import Tool, ToolOutput
from acp_server.tools.budget import ToolBudget, cap_output, keep_head_and_tail, utf8_size
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from acp_server.tools.workspace import PathRoots
from tests.support.tool_call import a_call

pytestmark = pytest.mark.anyio


BUDGET = ToolBudget(max_result_bytes=4096, max_read_lines=50, max_search_results=20)


@pytest.fixture(autouse=True, scope="module")
def subreaper() -> None:
    become_subreaper()  # as the server does (bash's children are reaped, not left as zombies)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


def tools_in(root: Path, budget: ToolBudget = BUDGET) -> dict[str, Tool]:
    path_roots = PathRoots(str(root))
    return {t.name: t for t in builtin_tools(path_roots, LocalFiles(), LocalCommands(), budget)}


async def run(tool: Tool, **arguments: Any) -> ToolOutput:
    return await tool.run(arguments, a_call(), TurnCancellation().signal)


def test_head_and_tail_are_kept_around_a_note_on_the_middle() -> None:
    lines = [f"line {i:05}" for i in range(1, 10001)]
    whole = "\n".join(lines)
    cut = keep_head_and_tail(whole, 2048, "ask for less")
    assert utf8_size(cut) <= 2048
    assert cut.startswith("line 00001\nline 00002\n") and cut.endswith("line 10000")
    kept = [line for line in cut.splitlines() if line.startswith("line ")]
    assert kept == lines[: len(kept) // 2] + lines[-(len(kept) - len(kept) // 2) :]
    middle_bytes = utf8_size(whole) - sum(utf8_size(line) + 1 for line in kept) + 1
    assert f"[... {middle_bytes} bytes, " in cut and "cut from the middle; ask for less ...]" in cut
    assert keep_head_and_tail("short", 2048, "x") == "short"


def test_cap_output_keeps_everything_but_the_text() -> None:
    output = ToolOutput("é" * 10_000, failed=True, terminal_id="t1")
    capped = cap_output(output, 1024)
    assert utf8_size(capped.text) <= 1024 and capped.failed and capped.terminal_id == "t1"
    assert "over the 1024-byte limit for tool results" in capped.text
    assert cap_output(ToolOutput("small"), 1024) == ToolOutput("small")


async def test_read_file_returns_a_window_within_the_budget(root: Path) -> None:
    (root / "long.txt").write_text("".join(f"{i:03} " + "x" * 95 + "\n" for i in range(1, 201)))
    read = tools_in(root)["read_file"]
    first = await run(read, path="long.txt")
    assert utf8_size(first.text) <= BUDGET.max_result_bytes
    assert first.text.startswith("001 ")
    assert "[lines 1-35 of 200; output capped at 50 lines / 3 KiB; call read_file with " in (
        first.text
    )
    assert "offset=36 to read on]" in first.text
    assert "up to 50 lines or 3 KiB" in read.description  # what the model is told


async def test_grep_and_glob_show_what_fits_and_the_totals(root: Path) -> None:
    for name in "abcde":
        (root / f"{name}.txt").write_text("needle\n" * 30)
    tools = tools_in(root)
    grep = await run(tools["grep"], pattern="needle")
    assert utf8_size(grep.text) <= BUDGET.max_result_bytes
    shown = [line for line in grep.text.splitlines() if line.endswith(": needle")]
    assert len(shown) == 20  # max_search_results
    assert grep.text.endswith("[showing 20 of 150 matches in 5 files; narrow the pattern or path]")

    for i in range(300):
        (root / f"file-with-a-rather-long-name-{i:04}.log").write_text("")
    glob = await run(tools["glob"], pattern="*.log")
    assert utf8_size(glob.text) <= BUDGET.max_result_bytes
    assert glob.text.endswith("[showing 20 of 300 matches; use a narrower pattern]")

    wide = tools_in(root, ToolBudget(max_result_bytes=2048, max_search_results=1000))
    glob = await run(wide["glob"], pattern="*.log")  # now the bytes are the limit
    shown_paths = glob.text.splitlines()[:-1]
    assert 0 < len(shown_paths) < 300 and utf8_size(glob.text) <= 2048
    assert glob.text.endswith(
        f"[showing {len(shown_paths)} of 300 matches; use a narrower pattern]"
    )
    listing = await run(wide["list_dir"])
    assert utf8_size(listing.text) <= 2048
    assert "of 305 entries; use glob with a pattern to find the others]" in listing.text


async def test_bash_keeps_the_head_and_the_tail_of_a_long_output(root: Path) -> None:
    bash = tools_in(root)["bash"]
    output = await run(bash, command="seq 1 100000")
    assert utf8_size(output.text) <= BUDGET.max_result_bytes
    lines = output.text.splitlines()
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-2:] == ["100000", "[exit code: 0]"]
    assert "cut from the middle; to see all of it, redirect the output to a file" in output.text


def test_a_budget_leaves_room_for_the_closing_note() -> None:
    assert BUDGET.body_bytes == 4096 - 512
    assert ToolBudget(max_result_bytes=600).body_bytes == 300


# The [tools] table of the config file ---------------------------------------------------------


def test_the_config_file_sets_the_budget(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[tools]\nmax_result_bytes = 8192\nmax_search_results = 50\nmax_checkpoint_bytes = 0\n"
    )
    assert load_config(path).tools == ToolBudget(
        max_result_bytes=8192, max_search_results=50, max_checkpoint_bytes=0
    )
    assert load_config(environ={"XDG_CONFIG_HOME": str(tmp_path / "none")}).tools == ToolBudget()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            "max_result_bytes = 100",
            "line 2: [tools] `max_result_bytes` must be an integer of at least 1024",
        ),
        ("max_read_lines = true", "[tools] `max_read_lines` must be an integer of at least 1"),
        (
            "max_lines = 5",
            "unknown key `max_lines` in [tools]; expected max_result_bytes, "
            "max_read_lines, max_search_results, max_checkpoint_bytes, "
            "max_checkpoint_store_bytes, max_image_bytes",
        ),
        (
            "max_checkpoint_bytes = -1",
            "[tools] `max_checkpoint_bytes` must be an integer of at least 0",
        ),
        (
            "max_image_bytes = 100000000000000000000",
            "[tools] `max_image_bytes` must be at most 15728640",
        ),
        (
            "max_result_bytes = 16777217",
            "[tools] `max_result_bytes` must be at most 16777216",
        ),
    ],
)
def test_bad_tools_settings_are_refused_clearly(tmp_path: Path, table: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[tools]\n{table}\n")
    with pytest.raises(ModelConfigError, match=re.escape(message)):
        load_config(path)
