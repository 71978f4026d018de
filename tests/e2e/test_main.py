"""`python -m acp_server` is the same agent as the `acp-server` console script."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp import text_block

from tests.support.agent_process import running_agent

pytestmark = pytest.mark.anyio


async def test_python_dash_m_acp_server_runs_the_agent(tmp_path: Path) -> None:
    command = (sys.executable, "-m", "acp_server")
    async with running_agent("--model", "echo", command=command) as (conn, _, _, client):
        init = await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("a b")])
    assert init.protocol_version == 1
    assert init.agent_info is not None and init.agent_info.name == "acp-server"
    assert response.stop_reason == "end_turn"
    chunks = [u.content.text for _, u in client.updates if u.session_update.endswith("_chunk")]
    assert chunks == ["a ", "b"]
