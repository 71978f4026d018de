"""Reading a repository's own files the hostile-input way (acp_server/tools/repo_files.py): the
repository root found by its `.git` (a worktree's file too), the directories from the root
down, and a file read within a budget, a link out of the repository, a link loop, a FIFO or a
spent budget refused with a note and without blocking. As AGENTS.md and command files use it:
tests/agent/test_instructions.py and tests/tools/test_custom_commands.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_server.tools.repo_files import directories_between, find_repository_root, read_capped


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def test_the_root_is_the_nearest_directory_holding_git(repo: Path) -> None:
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    assert find_repository_root(deep) == repo
    worktree = repo / "a" / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: elsewhere\n")
    assert find_repository_root(worktree) == worktree


def test_the_directories_run_from_the_root_down_to_the_cwd(repo: Path) -> None:
    assert directories_between(repo, repo / "a" / "b") == [repo, repo / "a", repo / "a" / "b"]
    assert directories_between(repo, repo) == [repo]
    assert directories_between(repo, Path("/elsewhere")) == [Path("/elsewhere")]


def test_a_file_is_read_within_the_budget_and_its_size_is_told(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("héllo world")
    assert read_capped(repo / "AGENTS.md", repo, 100) == ("héllo world", 12, None)
    assert read_capped(repo / "AGENTS.md", repo, 2) == ("h", 12, None)  # no half character
    assert read_capped(repo / "missing.md", repo, 100) is None


def test_a_link_inside_the_repository_is_followed_and_one_out_of_it_is_not(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "docs.md").write_text("inside")
    (repo / "in.md").symlink_to(repo / "docs.md")
    secret = tmp_path.resolve() / "secret.txt"
    secret.write_text("key")
    (repo / "out.md").symlink_to(secret)
    assert read_capped(repo / "in.md", repo, 100) == ("inside", 6, None)
    assert read_capped(repo / "out.md", repo, 100) == (
        "",
        0,
        f"skipped: it links to {secret}, outside {repo}",
    )
    assert read_capped(repo / "out.md", None, 100) == ("key", 3, None)  # the user's own file


def test_a_loop_a_fifo_and_a_spent_budget_are_notes_not_text(repo: Path) -> None:
    (repo / "loop.md").symlink_to(repo / "loop.md")
    os.mkfifo(repo / "fifo.md")
    (repo / "AGENTS.md").write_text("text")
    looped = read_capped(repo / "loop.md", repo, 100)
    assert looped is not None and looped[2] is not None
    assert looped[2].startswith("skipped: its link cannot be followed (")
    assert read_capped(repo / "fifo.md", repo, 100) == ("", 0, "skipped: not a regular file")
    assert read_capped(repo / "AGENTS.md", repo, 0) == (
        "",
        4,
        "skipped: the budget for instruction files is used up",
    )
