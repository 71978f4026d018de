"""v2's session params in v1's shapes (acp_server/acp/v2/params.py): MCP servers each name their
transport in v2, with optional lists; the shared code takes v1's complete servers."""

from __future__ import annotations

import msgspec

from acp_protocol.mcp import EnvVariable, HttpHeader, McpServer
from acp_protocol.system_prompt import SystemPrompt
from acp_protocol.v2 import unstable as u
from acp_server.acp.v2.params import fork_params, mcp_servers, new_params, resume_params


def test_stdio_and_http_servers_become_v1_servers_with_their_lists() -> None:
    raw = b"""[
        {"type": "stdio", "name": "fs", "command": "/bin/mcp-fs"},
        {"type": "stdio", "name": "env", "command": "/bin/x", "args": ["-v"],
         "env": [{"name": "A", "value": "1"}]},
        {"type": "http", "name": "web", "url": "http://127.0.0.1/mcp"},
        {"type": "http", "name": "auth", "url": "http://h/mcp",
         "headers": [{"name": "X", "value": "y"}]}
    ]"""
    servers = msgspec.json.decode(raw, type=list[u.McpServer])
    assert mcp_servers(servers) == [
        McpServer(name="fs", command="/bin/mcp-fs", args=[], env=[]),
        McpServer(
            name="env", command="/bin/x", args=["-v"], env=[EnvVariable(name="A", value="1")]
        ),
        McpServer(name="web", type="http", url="http://127.0.0.1/mcp", headers=[]),
        McpServer(
            name="auth", type="http", url="http://h/mcp", headers=[HttpHeader(name="X", value="y")]
        ),
    ]
    assert all(s.is_stdio for s in mcp_servers(servers)[:2])


def test_new_resume_and_fork_keep_every_field_and_default_the_servers_to_none() -> None:
    prompt = SystemPrompt(mode="append", content=[])
    new = new_params(u.NewSessionWithPrompt(cwd="/w", additional_directories=["/x"]))
    assert (new.cwd, new.mcp_servers, new.additional_directories) == ("/w", [], ["/x"])
    resumed = resume_params(
        u.ResumeSessionWithPrompt(session_id="s", cwd="/w", system_prompt=prompt)
    )
    assert (resumed.session_id, resumed.mcp_servers, resumed.system_prompt) == ("s", [], prompt)
    forked = fork_params(u.ForkSessionRequest(session_id="s", cwd="/w"))
    assert (forked.session_id, forked.cwd, forked.mcp_servers) == ("s", "/w", [])
