"""The calls the test MCP server (tests/support/mcp_server.py) has started, as it notes them in the
file MCP_TEST_CALLS names, and waiting for one to be in flight."""

from __future__ import annotations

from pathlib import Path

import anyio


def noted_calls(calls: Path) -> list[str]:
    """The calls the test server has started, as it noted them in `calls`."""
    return calls.read_text().split() if calls.exists() else []


async def in_flight(calls: Path, name: str = "slow", within: float = 20.0) -> None:
    """Return once the test server has started a call of `name`."""
    with anyio.fail_after(within):
        while name not in noted_calls(calls):  # noqa: ASYNC110 - another process's file
            await anyio.sleep(0.02)
