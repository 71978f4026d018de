"""The conversation a model request carries, kept in step with the session log (issue 13,
item 8): built incrementally, it equals what the records say, refused turns included."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from acp_server.agent.agent import spawn_agent
from acp_server.agent.conversation import Conversation, item_chars
from acp_server.agent.loop import AgentConfig
from acp_server.models.base import (
    AssistantMessage,
    ImagePart,
    ModelRequest,
    TextPart,
    ToolCallRequest,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from acp_server.models.script import ScriptedProvider, echo_provider
from acp_server.models.spec import load_model
from acp_server.session import records as rec
from acp_server.session.log import SessionLog

AT = "2026-12-01T00:00:00.000Z"


def turn(turn_id: str, prompt: str, answer: str, outcome: rec.Outcome) -> list[rec.Record]:
    return [
        rec.TurnStart(turn_id=turn_id, at=AT),
        rec.UserMessage(
            message_id=f"{turn_id}_u",
            content=[rec.TextPart(text=prompt)],
            origin="prompt",
            turn_id=turn_id,
            at=AT,
        ),
        rec.StepStart(turn_id=turn_id, step=1, at=AT),
        rec.AssistantMessage(
            turn_id=turn_id,
            message_id=f"{turn_id}_a",
            parts=[rec.ThoughtPart(text="hm"), rec.TextPart(text=answer)],
            tool_calls=[rec.ToolCallRecord(call_id=f"{turn_id}_c", name="grep", arguments={})],
            at=AT,
        ),
        rec.ToolResult(
            turn_id=turn_id, call_id=f"{turn_id}_c", status="failed", output="no match", at=AT
        ),
        rec.StepEnd(turn_id=turn_id, step=1, finish="tool_calls", at=AT),
        rec.TurnEndRecord(turn_id=turn_id, outcome=outcome, at=AT),
    ]


def expected_items(prompt: str, answer: str, turn_id: str) -> list[object]:
    return [
        UserMessage(parts=[TextPart(text=prompt)]),
        AssistantMessage(
            text=answer,
            tool_calls=[ToolCallRequest(call_id=f"{turn_id}_c", name="grep", arguments={})],
        ),
        ToolResultMessage(call_id=f"{turn_id}_c", output="no match", is_error=True),
    ]


def test_appended_records_give_the_same_items_as_building_from_all_of_them() -> None:
    records = [
        *turn("t1", "first", "one", rec.Completed()),
        *turn("t2", "refused", "no", rec.Refusal()),
        rec.UserMessage(
            message_id="inj",
            content=[
                rec.ImagePart(data="aGk=", mime_type="image/png"),
                rec.ResourcePart(uri="file:///x", text="body"),
                rec.ResourceLinkPart(uri="file:///y", name="y"),
            ],
            origin="context",
            at=AT,
        ),
        rec.ModeChange(mode="bypass", at=AT),
        *turn("t3", "third", "three", rec.Aborted()),
    ]
    built = Conversation(records)
    grown = Conversation()
    for record in records:
        grown.add(record)
    injected = UserMessage(
        parts=[
            ImagePart(data="aGk=", mime_type="image/png"),
            TextPart(text='<resource uri="file:///x">\nbody\n</resource>'),
            TextPart(text="[resource link: y <file:///y>]"),
        ]
    )
    expected = [
        *expected_items("first", "one", "t1"),
        injected,
        *expected_items("third", "three", "t3"),
    ]
    assert list(built.items) == expected
    assert list(grown.items) == expected
    assert built.chars == grown.chars == sum(item_chars(i) for i in expected)


def test_a_refusal_takes_out_its_turn_as_it_ends() -> None:
    conversation = Conversation(turn("t1", "first", "one", rec.Completed()))
    before = list(conversation.items)
    chars = conversation.chars
    for record in turn("t2", "refused", "no", rec.Refusal())[:-1]:
        conversation.add(record)
    assert len(conversation.items) == len(before) + 3  # visible while the turn runs
    conversation.add(rec.TurnEndRecord(turn_id="t2", outcome=rec.Refusal(), at=AT))
    assert list(conversation.items) == before
    assert conversation.chars == chars


@pytest.mark.anyio
async def test_each_request_carries_the_history_and_reuses_the_items_already_built(
    tmp_path: Path,
) -> None:
    seen: list[ModelRequest] = []
    echo = echo_provider()

    class Recording:
        name = "recording"

        def stream(self, request: ModelRequest, signal: object) -> object:
            seen.append(request)
            return echo.stream(request, signal)  # type: ignore[arg-type]

    log = SessionLog("sess_conv")
    async with anyio.create_task_group() as tg:
        handle = spawn_agent(log, AgentConfig(model=Recording()), tg)  # type: ignore[arg-type]
        for word in ("alpha", "beta", "gamma"):
            await handle.agent.followup([rec.TextPart(text=word)]).wait()
        await handle.dispose()
    assert [len(r.messages) for r in seen] == [1, 3, 5]
    assert seen[-1].messages == list(Conversation(log.records).items)[:-1]  # not its answer
    # Items are built once: the first turn's objects are the very ones the last request holds.
    assert seen[-1].messages[0] is seen[0].messages[0]
    assert seen[-1].messages[1] is seen[1].messages[1]


@pytest.mark.anyio
async def test_scripted_usage_counts_a_grown_history_and_a_rewritten_one_alike(
    tmp_path: Path,
) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"responses": [[{"text": "ok"}]]}))
    provider = load_model(f"script:{script}")
    assert isinstance(provider, ScriptedProvider)
    from acp_server.cancellation import TurnCancellation

    async def input_tokens(messages: list[object]) -> int:
        request = ModelRequest(
            session_id="s",
            system_prompt="sys tem",
            messages=messages,
            tools=[],  # type: ignore[arg-type]
        )
        usage = [
            e
            async for e in provider.stream(request, TurnCancellation().signal)
            if isinstance(e, Usage)
        ]
        return usage[0].input_tokens

    history: list[object] = [
        UserMessage(parts=[TextPart(text="a b c")]),
        AssistantMessage(text="d"),
    ]
    assert await input_tokens(history) == 2 + 3 + 1
    history.append(ToolResultMessage(call_id="c", output="e f g h"))
    assert await input_tokens(history) == 2 + 3 + 1 + 4
    rewritten = [UserMessage(parts=[TextPart(text="x")]), *history[1:]]
    assert await input_tokens(rewritten) == 2 + 1 + 1 + 4
