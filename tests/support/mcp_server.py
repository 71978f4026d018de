"""A small MCP server for the tests (FastMCP): `echo` (fast, read-only), `slow` (sleeps 300 s)
and `fail` (raises).

    python tests/support/mcp_server.py                 # stdio
    python tests/support/mcp_server.py http PORT       # streamable HTTP on 127.0.0.1:PORT/mcp
    python tests/support/mcp_server.py sse PORT        # SSE on 127.0.0.1:PORT/sse

With MCP_TEST_PIDFILE set, the server writes its pid there at start; with MCP_TEST_CALLS set,
`slow` appends a line there as it starts, so a test can wait for the call to be in flight.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations


def build(port: int = 0) -> FastMCP:
    server = FastMCP("demo", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        """Return the text."""
        return f"echo: {text}"

    @server.tool()
    async def slow() -> str:
        """Sleep for 300 seconds."""
        _note_call("slow")
        await anyio.sleep(300)
        return "slept"

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise RuntimeError("this tool always fails")

    return server


def _note_call(name: str) -> None:
    calls = os.environ.get("MCP_TEST_CALLS")
    if calls:
        with open(calls, "a") as f:
            f.write(f"{name}\n")


def main() -> None:
    pidfile = os.environ.get("MCP_TEST_PIDFILE")
    if pidfile:
        with open(pidfile, "a") as f:
            f.write(f"{os.getpid()}\n")
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = build(port)
    if transport == "http":
        server.run(transport="streamable-http")
    elif transport == "sse":
        server.run(transport="sse")
    else:
        server.run(transport="stdio")


if __name__ == "__main__":
    main()
