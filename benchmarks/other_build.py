"""Another acp-server build measured beside this one, named by its commit (`--baseline COMMIT`).

The benchmark builds it: a git worktree of that commit at a temporary path, with its own venv
made by `uv sync --frozen` from that commit's uv.lock, removed when the run ends. A figure
recorded with `--baseline ac68820` can so be rerun by anyone with this repository, on any
machine, instead of depending on a scratch worktree of the machine it was measured on.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import REPO, SUBJECT, subject_exe


@dataclass(frozen=True)
class Build:
    """A checkout of one commit with its own venv."""

    commit: str
    """The full commit id."""
    tree: Path

    @property
    def short(self) -> str:
        return self.commit[:7]

    @property
    def exe(self) -> Path:
        """Its acp-server console script."""
        return self.tree / ".venv" / "bin" / SUBJECT


def add_baseline_args(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument(
        "--baseline",
        metavar="COMMIT",
        required=required,
        help="a commit of this repository (id, tag or branch) to build and measure the same way",
    )
    parser.add_argument(
        "--baseline-label",
        help="how the baseline is named in the table (default: acp-server at <commit>)",
    )


def resolve(commit: str, repo: Path = REPO) -> str:
    """The full id of `commit` in `repo`, or exit saying it is not one."""
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        sys.exit(f"bench: --baseline {commit!r} is not a commit of {repo}")
    return found.stdout.strip()


def uv_executable() -> str:
    """The uv that runs us (`uv run` names itself in UV), else the one on PATH."""
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        sys.exit("bench: uv not found; run via `uv run benchmarks`")
    return uv


def environment_outside_this_venv() -> dict[str, str]:
    """Our environment without what points at this checkout's venv, so that uv run in another
    tree uses that tree's own."""
    return {
        name: value
        for name, value in os.environ.items()
        if name not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")
    }


@contextmanager
def built(commit: str, repo: Path = REPO) -> Iterator[Build]:
    """A worktree of `commit` of `repo` at a temporary path with its venv synced; removed
    afterwards."""
    full = resolve(commit, repo)
    with tempfile.TemporaryDirectory(prefix=f"acp-server-{full[:7]}-") as scratch:
        tree = Path(scratch) / "tree"
        print(f"bench: building {full[:7]} in {tree}", file=sys.stderr)
        subprocess.run(
            ["git", "worktree", "add", "--quiet", "--detach", str(tree), full],
            cwd=repo,
            check=True,
        )
        try:
            subprocess.run(
                [uv_executable(), "sync", "--frozen", "--quiet"],
                cwd=tree,
                env=environment_outside_this_venv(),
                stdout=sys.stderr,
                check=True,
            )
            yield Build(full, tree)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=repo)


def baseline_label(args: argparse.Namespace) -> str:
    """The baseline's name in tables: `--baseline-label`, else `acp-server at <short id>`."""
    build: Build = args.baseline_build
    return str(args.baseline_label or f"{SUBJECT} at {build.short}")


def agents_to_measure(args: argparse.Namespace) -> dict[str, Path]:
    """This checkout's acp-server first, then the baseline build if `--baseline` named one."""
    agents = {SUBJECT: subject_exe()}
    if getattr(args, "baseline_build", None) is not None:
        agents[baseline_label(args)] = args.baseline_build.exe
    return agents
