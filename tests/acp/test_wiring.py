"""What the session wiring (acp_server/acp/wiring.py) converts at the edge: the `mcpServers` of
`session/new`, `load` and `resume` become the MCP extension's own config, once, so the
extension never sees a wire type. The wiring as a whole runs in the e2e tests (every session)."""

from __future__ import annotations

import msgspec

from acp_protocol.mcp import McpServer
from acp_server.acp.wiring import mcp_config
from acp_server.extensions.mcp import McpServerConfig


def wire(**fields: object) -> McpServer:
    return msgspec.convert(fields, McpServer)


def test_a_stdio_server_keeps_its_command_arguments_and_environment() -> None:
    server = wire(
        name="files",
        command="/usr/bin/mcp-files",
        args=["--root", "."],
        env=[{"name": "TOKEN", "value": "t"}, {"name": "MODE", "value": "ro"}],
    )
    assert mcp_config(server) == McpServerConfig(
        name="files",
        transport="stdio",
        command="/usr/bin/mcp-files",
        args=("--root", "."),
        env={"TOKEN": "t", "MODE": "ro"},
    )


def test_http_and_sse_servers_keep_their_url_and_headers() -> None:
    for kind in ("http", "sse"):
        server = wire(
            name="web",
            type=kind,
            url="https://mcp.example/x",
            headers=[{"name": "Authorization", "value": "Bearer k"}],
        )
        assert mcp_config(server) == McpServerConfig(
            name="web",
            transport=kind,
            url="https://mcp.example/x",
            headers={"Authorization": "Bearer k"},
        )


def test_a_transport_we_cannot_reach_is_passed_on_by_name() -> None:
    """The extension fails that server with a message naming the transport; the session
    lives on (tests/extensions/test_mcp.py)."""
    server = wire(name="new", type="acp", url="x", headers=[])
    assert mcp_config(server).transport == "acp"
