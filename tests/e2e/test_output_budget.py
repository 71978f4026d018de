"""Every model request carries an output budget, through the real process against a local
OpenAI-compatible server: the configured `max_output_tokens` (per model over per provider),
else the default, and never more than the context window leaves; hitting it ends the turn
`max_tokens`."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from acp_server.models.output import DEFAULT_OUTPUT_TOKENS
from tests.support.agent_process import running_agent
from tests.support.openai_agent import chat_bodies, chunk, environment, start, text_reply
from tests.support.sse_server import openai_chunks, serve

pytestmark = pytest.mark.anyio


async def budgets(tmp_path: Path, config: str, model: str = "qwen") -> list[int]:
    async with serve(text_reply("hi"), text_reply("again")) as server:
        env = environment(tmp_path, server, config)
        args = ("--model", f"openai:{model}", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, _, _):
            sid = await start(conn, tmp_path)
            await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            await conn.prompt(session_id=sid, prompt=[text_block("x " * 300)])
    return [body["max_tokens"] for body in chat_bodies(server)]


async def test_the_default_budget_is_sent_when_the_window_has_room(tmp_path: Path) -> None:
    config = "[providers.openai]\ncontext_window = 131072\n"
    assert await budgets(tmp_path, config) == [DEFAULT_OUTPUT_TOKENS] * 2


async def test_the_model_table_wins_over_the_provider(tmp_path: Path) -> None:
    config = (
        "[providers.openai]\ncontext_window = 131072\nmax_output_tokens = 4000\n"
        '[providers.openai.models."qwen"]\nmax_output_tokens = 700\n'
    )
    assert await budgets(tmp_path, config) == [700, 700]
    assert await budgets(tmp_path / "other", config, model="llama") == [4000, 4000]


async def test_the_budget_never_exceeds_what_the_window_leaves(tmp_path: Path) -> None:
    config = "[providers.openai]\ncontext_window = 4096\nmax_output_tokens = 8000\n"
    first, second = await budgets(tmp_path, config)
    # The request itself (system prompt, tools, messages) takes its share of the 4096 tokens;
    # the longer second prompt leaves less.
    assert 0 < second < first < 4096


async def test_reaching_the_budget_ends_the_turn_max_tokens(tmp_path: Path) -> None:
    reply = openai_chunks([chunk({"content": "a long answer"}), chunk(finish_reason="length")])
    async with serve(reply) as server:
        env = environment(
            tmp_path, server, "[providers.openai]\ncontext_window = 4096\nmax_output_tokens = 5\n"
        )
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"))
        async with running_agent(*args, env=env) as (conn, _, _, _):
            sid = await start(conn, tmp_path)
            response = await conn.prompt(session_id=sid, prompt=[text_block("talk")])
    assert response.stop_reason == "max_tokens"
    assert chat_bodies(server)[0]["max_tokens"] == 5
