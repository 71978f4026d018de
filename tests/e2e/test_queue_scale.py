"""Thousands of prompts queued in one session, through the real process and the SDK client:
each is admitted, withdrawn by `$/cancel_request` or run, in order, with the right answer.

The cost per prompt is shown by `benchmarks queue` (docs/benchmarks.md) and, without timing,
by tests/agent/test_inbox.py; this test shows the behaviour holds at that scale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block

from tests.support.agent_process import running_agent

pytestmark = pytest.mark.anyio

QUEUED = 1000


async def test_thousands_of_queued_prompts_run_in_order_and_withdrawn_ones_never_run(
    tmp_path: Path,
) -> None:
    # The first turn streams until it is cancelled, so every later prompt waits in the queue;
    # the others answer with their own number.
    model = tmp_path / "model.json"
    # A slow tick: every frame is schema-checked by the test client, which must keep up.
    responses: list[Any] = [[{"text": "tick ", "repeat": 1_000_000, "delay_ms": 100}]]
    responses += [[{"text": f"answer {n}"}] for n in range(1, QUEUED + 1)]
    model.write_text(json.dumps({"responses": responses}))
    async with running_agent(
        "--model", f"script:{model}", "--data-dir", str(tmp_path / "data")
    ) as (conn, _, frames, client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        stops: dict[int, str] = {}

        async def ask(n: int) -> None:
            stops[n] = (await conn.prompt(session_id=sid, prompt=[text_block(f"p{n}")])).stop_reason

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, 0)
            await client.wait_for_updates(2)  # the first turn is streaming
            for n in range(1, QUEUED + 1):
                tg.start_soon(ask, n)
            with anyio.fail_after(60):
                # The frame log has no event to wait on; poll it until every prompt is sent.
                while sum(1 for f in frames.sent if f.get("method") == "session/prompt") <= QUEUED:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            by_text = {
                f["params"]["prompt"][0]["text"]: f["id"]
                for f in frames.sent
                if f.get("method") == "session/prompt"
            }
            assert len(by_text) == QUEUED + 1
            # Withdraw every odd-numbered queued prompt, then stop the running one (keeping
            # the queue): the even-numbered ones run, in the order they were sent.
            for n in range(1, QUEUED + 1, 2):
                await conn._conn.send_notification(
                    "$/cancel_request", {"requestId": by_text[f"p{n}"]}
                )
            await conn._conn.send_notification("$/cancel_request", {"requestId": by_text["p0"]})

    assert stops[0] == "cancelled"
    assert all(stops[n] == "cancelled" for n in range(1, QUEUED + 1, 2))
    assert all(stops[n] == "end_turn" for n in range(2, QUEUED + 1, 2))
    answers = [
        u.content.text
        for _, u in client.updates
        if u.session_update == "agent_message_chunk" and u.content.text.startswith("answer")
    ]
    # The script answers per model request, so the n-th turn that ran gets "answer n".
    assert answers == [f"answer {n}" for n in range(1, QUEUED // 2 + 1)]
    journal = tmp_path / "data" / "sessions" / f"{sid}.jsonl"
    records = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    prompted = [
        r["content"][0]["text"]
        for r in records
        if r["type"] == "message/user" and r.get("origin", "prompt") == "prompt"
    ]
    assert prompted == ["p0", *(f"p{n}" for n in range(2, QUEUED + 1, 2))]
