"""Watching real processes from a test: the pid files they write, whether a pid is still there,
and the subreaper the server makes itself at start-up."""

from __future__ import annotations

import ctypes
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from acp_server.process import ProcessResult, become_subreaper, run_process

WAIT_S = 10.0
DEADLINE = 20.0
"""Generous bound on a process test's waits: a hang fails instead of blocking the suite."""
BASH = shutil.which("bash") or "/bin/bash"
_PR_SET_CHILD_SUBREAPER = 36


def read_pids(path: Path) -> list[int]:
    """The pids written to `path` so far (none while it does not exist)."""
    return [int(word) for word in path.read_text().split()] if path.exists() else []


async def wait_for_pids(path: Path, count: int = 1, within: float = WAIT_S) -> list[int]:
    """The pids in `path` once it holds at least `count` of them."""
    with anyio.fail_after(within):
        while len(pids := read_pids(path)) < count:  # noqa: ASYNC110 - another process's file
            await anyio.sleep(0.01)
    return pids


def bash(script: str) -> list[str]:
    return [BASH, "-c", script]


def write_pids(path: Path, *words: str) -> str:
    """Shell that writes the given words (`$$`, `$!`, ...) to `path` in one atomic step."""
    return f'echo {" ".join(words)} > "{path}.tmp" && mv "{path}.tmp" "{path}"'


async def run_bounded(argv: list[str], cwd: Path, **kwargs: object) -> ProcessResult:
    """`run_process` in `cwd` (with no registry unless one is given), failing the test after
    DEADLINE instead of hanging."""
    with anyio.fail_after(DEADLINE):
        kwargs.setdefault("registry", None)
        return await run_process(argv, cwd=str(cwd), **kwargs)  # type: ignore[arg-type]


def assert_gone(pids: list[int]) -> None:
    """Every pid is gone, not even a zombie."""
    assert pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def alive(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def exists(pid: int) -> bool:
    """Whether `pid` exists at all (a zombie not yet reaped still does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def existing(pids: list[int]) -> list[int]:
    """Those of `pids` that still exist (zombies included)."""
    return [pid for pid in pids if exists(pid)]


@contextmanager
def subreaper() -> Iterator[None]:
    """As the server does at start-up (orphaned grandchildren are re-parented to us and reaped
    at once instead of lingering as init's zombies); undone afterwards, so that other test
    modules' orphans keep going to init."""
    enabled = become_subreaper()
    try:
        yield
    finally:
        if enabled:
            prctl = ctypes.CDLL(None, use_errno=True).prctl
            prctl.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
            prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
