"""The real agent against a fake OpenAI-compatible server (tests/support/sse_server.py), for the
e2e tests of a model's behaviour: the server's replies (text, a tool call, chunks), the agent's
environment that points it there, what the server was sent, and a started session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.sse_server import FakeServer, Reply, openai_chunks

WINDOW_4096 = "[providers.openai]\ncontext_window = 4096\n"
WINDOW_16K = "[providers.openai]\ncontext_window = 16384\n"


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]}


def tool_call(call_id: str, name: str, arguments: str) -> Reply:
    delta = {
        "tool_calls": [
            {
                "index": 0,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ]
    }
    return openai_chunks([chunk(delta), chunk(finish_reason="tool_calls")])


def text_reply(text: str, usage: dict[str, int] | None = None) -> Reply:
    chunks = [chunk({"content": text}, "stop")]
    if usage is not None:
        chunks.append({"choices": [], "usage": usage})
    return openai_chunks(chunks)


def environment(tmp_path: Path, server: FakeServer, config: str = "") -> dict[str, str]:
    home = tmp_path / "config"
    (home / "acp-server").mkdir(parents=True, exist_ok=True)
    (home / "acp-server" / "config.toml").write_text(config)
    return {"XDG_CONFIG_HOME": str(home), "OPENAI_BASE_URL": server.url + "/v1"}


def chat_bodies(server: FakeServer) -> list[dict[str, Any]]:
    return [seen.json() for seen in server.requests if seen.path == "/v1/chat/completions"]


def updates_of(client: Any, kind: str) -> list[Any]:
    return [u for _, u in client.updates if u.session_update == kind]


async def start(conn: Any, cwd: Path) -> str:
    await conn.initialize(protocol_version=1)
    return str((await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id)
