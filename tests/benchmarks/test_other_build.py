"""A baseline named by its commit is built by the benchmark (benchmarks/other_build.py): a
worktree of that commit at a temporary path, synced by uv, removed when the run ends.

A throwaway repository stands in for this one (the tests must not add worktrees to the
repository they run in), and a stand-in `uv` records how it was called and makes the venv's
acp-server: syncing a real venv is uv's business and takes its time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.other_build import built, resolve

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}

FAKE_UV = """\
import json, os, pathlib, sys
record = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": sorted(os.environ)}
pathlib.Path(os.environ["FAKE_UV_LOG"]).write_text(json.dumps(record))
exe = pathlib.Path(".venv/bin/acp-server")
exe.parent.mkdir(parents=True)
exe.write_text("#!/bin/sh\\n")
"""


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with two commits: `first` (a.txt = one), then `second` (a.txt = two)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet")
    for text in ("one", "two"):
        (repo / "a.txt").write_text(text)
        git(repo, "add", "a.txt")
        git(repo, "commit", "--quiet", "-m", text)
    git(repo, "tag", "first", "HEAD~1")
    return repo


@pytest.fixture
def fake_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`uv` as the benchmark finds it (UV), replaced by a script that records its call."""
    script = tmp_path / "uv"
    script.write_text(f"#!{sys.executable}\n{FAKE_UV}")
    script.chmod(0o755)
    log = tmp_path / "uv-call.json"
    monkeypatch.setenv("UV", str(script))
    monkeypatch.setenv("FAKE_UV_LOG", str(log))
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "this-checkout-venv"))
    return log


def test_a_commit_is_named_by_its_full_id_and_a_non_commit_is_refused(repo: Path) -> None:
    assert resolve("first", repo) == git(repo, "rev-parse", "HEAD~1")
    assert len(resolve("HEAD", repo)) == 40
    with pytest.raises(SystemExit, match="'no-such-commit' is not a commit of"):
        resolve("no-such-commit", repo)


def test_the_baseline_is_a_synced_worktree_of_its_commit_removed_afterwards(
    repo: Path, fake_uv: Path
) -> None:
    with built("first", repo) as build:
        assert build.commit == git(repo, "rev-parse", "first")
        assert build.short == build.commit[:7]
        assert (build.tree / "a.txt").read_text() == "one"
        assert git(build.tree, "rev-parse", "HEAD") == build.commit
        assert build.exe.is_file()
        call = json.loads(fake_uv.read_text())
        assert call["argv"] == ["sync", "--frozen", "--quiet"]
        assert Path(call["cwd"]) == build.tree
        assert "VIRTUAL_ENV" not in call["env"]  # the build's own venv, not this checkout's
        assert str(build.tree) in git(repo, "worktree", "list", "--porcelain")
    assert not build.tree.parent.exists()  # the temporary directory it was made in, too
    assert str(build.tree) not in git(repo, "worktree", "list", "--porcelain")
    assert (repo / "a.txt").read_text() == "two"  # the repository's own checkout is untouched
