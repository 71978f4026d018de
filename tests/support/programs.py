"""The helper programs tests start as real processes, by path."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent

MCP_SERVER = str(_HERE / "mcp_server.py")
"""An MCP server over stdio (or streamable HTTP with `http PORT`) with demo tools."""

NOISY_SERVER = str(_HERE / "noisy_server.py")
"""The real server whose `initialize` writes to fd 1 behind the protocol writer's back."""

SPAWNER = str(_HERE / "spawner.py")
"""A stand-in for the agent: `spawner.py MODE SCRIPT` starts `bash -c SCRIPT` as an MCP server,
a hook or a background item is started, says `started` on stderr, and waits to be killed."""
