"""Whether the command sandbox (bubblewrap) works on this machine, asked once per test run."""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest


@functools.cache
def bwrap_missing() -> str:
    """Why bwrap cannot confine commands here; "" when it can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap (bubblewrap) is not installed (.ci/run installs it when it runs as root)"
    argv = [bwrap, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--", "true"]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    if done.returncode != 0:
        return f"bwrap cannot create namespaces here: {done.stderr.decode(errors='replace')}"
    return ""


needs_bwrap = pytest.mark.skipif(bool(bwrap_missing()), reason=bwrap_missing() or "bwrap works")
"""Skip a test where the command sandbox cannot run, saying why."""


def offered_mode_ids() -> list[str]:
    """The modes a session offers on this machine, in order."""
    sandboxed = [] if bwrap_missing() else ["sandboxed"]
    return ["default", "accept_edits", "read_only", *sandboxed, "bypass"]
