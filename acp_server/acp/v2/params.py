"""v2's session params in the shape the shared session code takes (v1's Structs): the methods
that kept their meaning (new, resume, fork) differ in details only. Every v2 MCP server names
its transport (stdio is `"type": "stdio"`, `args`, `env` and `headers` are optional; an SSE
server was already refused when the params were decoded), and `mcpServers` may be left out."""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from acp_protocol import mcp
from acp_protocol import newer as v1
from acp_protocol import unstable as u1
from acp_protocol.v2 import session as s
from acp_protocol.v2 import unstable as u

__all__ = ["fork_params", "mcp_servers", "new_params", "resume_params"]


def mcp_servers(servers: list[s.McpServer] | UnsetType) -> list[mcp.McpServer]:
    """The client's MCP servers as the session wiring takes them."""
    if servers is UNSET:
        return []
    converted: list[mcp.McpServer] = []
    for server in servers:
        if isinstance(server, s.McpServerStdio):
            converted.append(
                mcp.McpServer(
                    name=server.name,
                    command=server.command,
                    args=server.args if server.args is not UNSET else [],
                    env=server.env if server.env is not UNSET else [],
                )
            )
        else:
            converted.append(
                mcp.McpServer(
                    name=server.name,
                    type="http",
                    url=server.url,
                    headers=server.headers if server.headers is not UNSET else [],
                )
            )
    return converted


def new_params(new: u.NewSessionWithPrompt) -> v1.NewSessionWithPrompt:
    """`session/new`'s params as v1's."""
    return v1.NewSessionWithPrompt(
        cwd=new.cwd,
        mcp_servers=mcp_servers(new.mcp_servers),
        additional_directories=new.additional_directories,
        system_prompt=new.system_prompt,
    )


def resume_params(resume: u.ResumeSessionWithPrompt) -> v1.ResumeSessionWithPrompt:
    """`session/resume`'s params as v1's (the replay cursor is the v2 handler's own)."""
    return v1.ResumeSessionWithPrompt(
        session_id=resume.session_id,
        cwd=resume.cwd,
        mcp_servers=mcp_servers(resume.mcp_servers),
        additional_directories=resume.additional_directories,
        system_prompt=resume.system_prompt,
    )


def fork_params(fork: u.ForkSessionRequest) -> u1.ForkSessionRequest:
    """`session/fork`'s params as v1's."""
    return u1.ForkSessionRequest(
        session_id=fork.session_id,
        cwd=fork.cwd,
        mcp_servers=mcp_servers(fork.mcp_servers),
        additional_directories=fork.additional_directories,
        system_prompt=fork.system_prompt,
    )
