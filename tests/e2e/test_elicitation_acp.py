"""The `ask_user` tool through the real process with raw frames: offered only to a client that
advertises form elicitation; the answer, a decline or a cancel reaches the model as the tool's
result; a turn cancel while the question is open answers `cancelled` without waiting for the
client and withdraws the request with `$/cancel_request`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.raw_client import RawClient, raw_agent, text
from tests.support.scripted_model import script

pytestmark = pytest.mark.anyio

FORM = {
    "type": "object",
    "properties": {
        "color": {"type": "string", "title": "Colour", "enum": ["red", "blue"]},
        "count": {"type": "integer", "minimum": 1},
        "sure": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    },
    "required": ["color"],
}
ASK = {"tool_call": {"name": "ask_user", "arguments": {"message": "Which colour?", "form": FORM}}}
FORM_CLIENT = {"elicitation": {"form": {}}}


async def session(client: RawClient, cwd: Path, capabilities: dict[str, Any]) -> str:
    await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
    result = await client.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(result["sessionId"])


def tool_results(client: RawClient, sid: str) -> list[dict[str, Any]]:
    return [
        u
        for u in client.updates(sid)
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed")
    ]


def result_text(update: dict[str, Any]) -> str:
    return str(update["content"][-1]["content"]["text"])


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (
            {"action": "accept", "content": {"color": "blue", "count": 2, "tags": ["a"]}},
            'The user answered: {"color": "blue", "count": 2, "tags": ["a"]}',
        ),
        ({"action": "decline"}, "The user declined to answer."),
        ({"action": "cancel"}, "The user cancelled the question without answering."),
    ],
)
async def test_the_answer_reaches_the_model_as_the_tool_result(
    tmp_path: Path, reply: dict[str, Any], says: str
) -> None:
    spec = script(tmp_path, [ASK], [{"text": "thanks"}])
    asked: list[dict[str, Any]] = []

    async def answer(params: dict[str, Any]) -> Any:
        asked.append(params)
        return reply

    async with raw_agent("--model", spec) as client:
        client.handlers["elicitation/create"] = answer
        sid = await session(client, tmp_path, FORM_CLIENT)
        result = await client.call("session/prompt", {"sessionId": sid, "prompt": text("go")})
        [done] = tool_results(client, sid)
    assert result["stopReason"] == "end_turn"
    [params] = asked
    assert params["sessionId"] == sid and params["mode"] == "form"
    assert params["toolCallId"] == done["toolCallId"]
    assert params["message"] == "Which colour?"
    assert params["requestedSchema"]["properties"]["color"]["enum"] == ["red", "blue"]
    assert done["status"] == "completed" and result_text(done) == says


async def test_a_form_acp_does_not_allow_is_told_to_the_model(tmp_path: Path) -> None:
    bad = {"message": "?", "form": {"properties": {"file": {"type": "object"}}}}
    spec = script(
        tmp_path, [{"tool_call": {"name": "ask_user", "arguments": bad}}], [{"text": "ok"}]
    )
    async with raw_agent("--model", spec) as client:
        sid = await session(client, tmp_path, FORM_CLIENT)
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("go")})
        [done] = tool_results(client, sid)
        assert not [f for f in client.received if f.get("method") == "elicitation/create"]
    assert done["status"] == "failed"
    assert "The question was not asked: the form is not one ACP allows" in result_text(done)


async def test_without_client_support_the_tool_is_not_offered(tmp_path: Path) -> None:
    spec = script(tmp_path, [ASK], [{"text": "ok"}])
    async with raw_agent("--model", spec) as client:
        sid = await session(client, tmp_path, {"elicitation": {"url": {}}})  # no form
        await client.call("session/prompt", {"sessionId": sid, "prompt": text("go")})
        [done] = tool_results(client, sid)
        assert not [f for f in client.received if f.get("method") == "elicitation/create"]
    assert done["status"] == "failed"
    assert "ask_user" in result_text(done)


async def test_a_cancel_while_the_question_is_open_answers_cancelled_and_withdraws_it(
    tmp_path: Path,
) -> None:
    spec = script(tmp_path, [ASK], [{"text": "never"}])
    released = anyio.Event()

    async def never_answer(params: dict[str, Any]) -> Any:
        await released.wait()  # the user never answers during the turn
        return {"action": "cancel"}

    async with raw_agent("--model", spec) as client:
        client.handlers["elicitation/create"] = never_answer
        sid = await session(client, tmp_path, FORM_CLIENT)
        prompt = await client.start("session/prompt", {"sessionId": sid, "prompt": text("go")})
        asked = await client.wait_for(lambda f: f.get("method") == "elicitation/create")
        await client.notify("session/cancel", {"sessionId": sid})
        response = await client.response(prompt)
        withdrawn = await client.wait_for(lambda f: f.get("method") == "$/cancel_request")
        answered_late = released.is_set()
        released.set()
    assert response["result"]["stopReason"] == "cancelled"
    assert not answered_late  # the response did not wait for the client
    assert withdrawn["params"]["requestId"] == asked["id"]
    # Nothing of the turn after its response.
    after = client.received[client.received.index(response) + 1 :]
    assert not [
        f
        for f in after
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] != "usage_update"
    ]
