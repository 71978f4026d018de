"""Plug-ins of the runtime: user hooks and MCP servers, adapters the ACP bridge wires in."""
