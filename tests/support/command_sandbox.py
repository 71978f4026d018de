"""Whether the command sandbox (bubblewrap) works on this machine, asked once per test run,
with the agent's own probe, so that the tests expect what the agent they start will offer."""

from __future__ import annotations

import functools

import anyio
import pytest

from acp_server.process.bubblewrap import BubblewrapProbe


@functools.cache
def bwrap_missing() -> str:
    """Why bwrap cannot confine commands here; "" when it can."""
    bwrap, why = anyio.run(BubblewrapProbe().check, None)
    return "" if bwrap is not None else why


needs_bwrap = pytest.mark.skipif(bool(bwrap_missing()), reason=bwrap_missing() or "bwrap works")
"""Skip a test where the command sandbox cannot run, saying why."""


def offered_mode_ids() -> list[str]:
    """The modes a session offers on this machine, in order."""
    sandboxed = [] if bwrap_missing() else ["sandboxed"]
    return ["default", "accept_edits", "read_only", *sandboxed, "bypass"]
