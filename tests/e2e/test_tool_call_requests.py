"""What a model that edits through tool calls is sent, pinned byte for byte: both requests of a
turn (a `read_file` call, then an answer) through the real process against a local
OpenAI-compatible server, in the compact variant (a 4k window) and the full one (16k), with a
file attached to the prompt as an embedded resource. The workspace holds no test command to
detect, and the config sets nothing about edits or sampling: such a model must see no change
from the text edit formats, the sampling settings or the test loop (issue 37). The expected
bodies in tests/data/requests/ (as sent, one line each) were written by the code before
those existed (main at aa02b0b, with background commands); the workspace path is replaced by
`{WORKSPACE}` and `--deterministic` fixes the date.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import embedded_text_resource, resource_block, text_block

from tests.support.agent_process import running_agent
from tests.support.openai_agent import (
    WINDOW_16K,
    WINDOW_4096,
    chat_bodies,
    environment,
    start,
    text_reply,
    tool_call,
)
from tests.support.sse_server import serve

pytestmark = pytest.mark.anyio

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "requests"
WORKSPACE_CHARS = 120


async def turn_bodies(tmp_path: Path, config: str) -> list[str]:
    """The two request bodies of one turn, as sent, with the workspace path replaced."""
    # Always WORKSPACE_CHARS long: the output budget (`max_tokens`) follows the request's size.
    workspace = tmp_path / ("w" * (WORKSPACE_CHARS - len(str(tmp_path)) - 1))
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the number is 7\n")
    (workspace / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    replies = (tool_call("call_1", "read_file", '{"path": "notes.txt"}'), text_reply("It is 7."))
    async with serve(*replies) as server:
        env = {**environment(tmp_path, server, config), "SHELL": "/bin/sh"}
        args = ("--model", "openai:qwen", "--data-dir", str(tmp_path / "data"), "--deterministic")
        async with running_agent(*args, env=env) as (conn, _, _, _):
            sid = await start(conn, workspace)
            attached = resource_block(
                embedded_text_resource(
                    (workspace / "stats.py").as_uri(), (workspace / "stats.py").read_text()
                )
            )
            prompt = [text_block("What is the number in notes.txt?"), attached]
            response = await conn.prompt(session_id=sid, prompt=prompt)
    assert response.stop_reason == "end_turn"
    bodies = [seen.body.decode() for seen in server.requests if seen.path.endswith("/completions")]
    assert len(bodies) == len(chat_bodies(server)) == 2
    return [body.replace(json.dumps(str(workspace))[1:-1], "{WORKSPACE}") for body in bodies]


@pytest.mark.parametrize(("variant", "config"), [("compact", WINDOW_4096), ("full", WINDOW_16K)])
async def test_a_tool_call_model_is_sent_what_it_was_sent_before(
    tmp_path: Path, variant: str, config: str
) -> None:
    bodies = await turn_bodies(tmp_path, config)
    expected = [(EXPECTED / f"tool_calls_{variant}_{n}.json").read_text() for n in (1, 2)]
    for sent, pinned in zip(bodies, expected, strict=True):
        assert json.loads(sent) == json.loads(pinned)  # readable where it differs
        assert sent == pinned  # and byte for byte
