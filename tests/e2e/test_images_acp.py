"""`read_file` of an image through the real process, the official SDK client and a fake
OpenAI-compatible server (tests/support/context_window_server.py) that reports
`modalities.vision` in `/props` like llama.cpp: a vision model's next request carries the image
after the tool result, a model without vision gets the description and a note (the server is
asked once), the config file's `images` key wins over the server, Anthropic gets the image
inside the `tool_result` (a local fake Messages server), the client sees the image in
the `tool_call_update` (every frame checked against the schema), the journal holds the base64
once, and `session/load` replays the image."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from PIL import Image

from acp_server.models.images import IMAGE_NOT_SENT
from tests.support.agent_process import running_agent
from tests.support.context_window_server import ContextWindowServer
from tests.support.sse_server import anthropic_events, serve

pytestmark = pytest.mark.anyio


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (0, 120, 255)).save(buffer, format="PNG")
    return buffer.getvalue()


def workspace(tmp_path: Path, config: str = "") -> tuple[Path, dict[str, str], list[str], str]:
    cwd = tmp_path / "work"
    cwd.mkdir()
    data = png()
    (cwd / "pic.png").write_bytes(data)
    (tmp_path / "config" / "acp-server").mkdir(parents=True)
    (tmp_path / "config" / "acp-server" / "config.toml").write_text(config)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "OPENAI_API_KEY": ""}
    args = ["--model", "openai:fake", "--data-dir", str(tmp_path / "data")]
    return cwd, env, args, base64.b64encode(data).decode()


def tool_updates(frames: Any) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in frames.received
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "tool_call_update"
        and f["params"]["update"].get("status") == "completed"
    ]


async def test_a_vision_model_gets_the_image_and_the_client_sees_it_live_and_on_load(
    tmp_path: Path,
) -> None:
    cwd, env, args, b64 = workspace(tmp_path)
    with ContextWindowServer(n_ctx=100_000, file="pic.png", vision=True) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            done = await conn.prompt(session_id=sid, prompt=[text_block("look at it")])
            assert done.stop_reason == "end_turn"
            [live] = tool_updates(frames)
        [answered] = server.chats("text")
        messages = answered.body["messages"]
        assert [m["role"] for m in messages[-3:]] == ["assistant", "tool", "user"]
        assert messages[-2]["content"].startswith(f"[image {cwd / 'pic.png'}: PNG, 4x3 pixels")
        image_part = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}
        assert image_part in messages[-1]["content"]
        shown = {
            "type": "content",
            "content": {"type": "image", "data": b64, "mimeType": "image/png"},
        }
        assert shown in live["content"]

        journal = (tmp_path / "data" / "sessions" / f"{sid}.jsonl").read_text()
        assert journal.count(b64) == 1  # the tool result's record alone holds it

        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await conn.initialize(protocol_version=1)
            await conn.load_session(session_id=sid, cwd=str(cwd), mcp_servers=[])
            [replayed] = tool_updates(frames)
            assert shown in replayed["content"]
            done = await conn.prompt(session_id=sid, prompt=[text_block("and again")])
            assert done.stop_reason == "end_turn"
        # The loaded session's next request still carries the first image (and the new one).
        assert str(server.chats("text")[-1].body).count(b64) == 2


async def test_a_model_without_vision_gets_the_description_and_is_asked_once(
    tmp_path: Path,
) -> None:
    cwd, env, args, b64 = workspace(tmp_path)
    with ContextWindowServer(n_ctx=100_000, file="pic.png", vision=False) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        async with running_agent(*args, env=env) as (conn, _, frames, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            for n in range(2):
                done = await conn.prompt(session_id=sid, prompt=[text_block(f"look {n}")])
                assert done.stop_reason == "end_turn"
            asked = server.props_asked
        for chat in server.chats():
            assert b64 not in str(chat.body)
        last = server.chats("text")[-1].body["messages"]
        assert last[-1]["role"] == "tool" and last[-1]["content"].endswith(IMAGE_NOT_SENT)
        # The client is shown the image whatever the model takes.
        assert all(b64 in str(update["content"]) for update in tool_updates(frames))
    # One /props for the context window, one for vision: none for the second turn.
    assert asked == 2


async def test_the_config_key_wins_over_the_server(tmp_path: Path) -> None:
    config = '[providers.openai.models."fake"]\nimages = false\n'
    cwd, env, args, b64 = workspace(tmp_path, config)
    with ContextWindowServer(n_ctx=100_000, file="pic.png", vision=True) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        async with running_agent(*args, env=env) as (conn, _, _, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            done = await conn.prompt(session_id=sid, prompt=[text_block("look")])
            assert done.stop_reason == "end_turn"
    assert all(b64 not in str(chat.body) for chat in server.chats())
    assert IMAGE_NOT_SENT in str(server.chats("text")[-1].body)


def _anthropic_events(events: list[dict[str, Any]]) -> Any:
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}}
    return anthropic_events([start, *events, {"type": "message_stop"}])


def _stop(reason: str) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason},
        "usage": {"output_tokens": 1},
    }


async def test_anthropic_gets_the_image_inside_the_tool_result(tmp_path: Path) -> None:
    cwd, env, _, b64 = workspace(tmp_path)
    read = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "read_file",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"path": "pic.png"}'},
        },
        {"type": "content_block_stop", "index": 0},
        _stop("tool_use"),
    ]
    answer = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "A"}},
        {"type": "content_block_stop", "index": 0},
        _stop("end_turn"),
    ]
    async with serve(_anthropic_events(read), _anthropic_events(answer)) as server:
        env.update({"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-test"})
        args = ["--model", "anthropic:claude-x", "--data-dir", str(tmp_path / "data")]
        async with running_agent(*args, env=env) as (conn, _, _, _):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            done = await conn.prompt(session_id=sid, prompt=[text_block("look")])
        assert done.stop_reason == "end_turn"
        [result] = server.requests[1].json()["messages"][-1]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"
    assert result["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": b64},
    }
