"""The scripted model (`script:PATH`, `echo`): events, cursors, finish rules, cancellation,
and load-time errors. The file format is the stable "Scripted model" section of
ARCHITECTURE.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_server.cancellation import TurnAborted, TurnCancellation, TurnSignal, UserCancel
from acp_server.models.base import (
    AssistantMessage,
    ConversationItem,
    Finish,
    ImagePart,
    ModelConfigError,
    ModelError,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    TextDelta,
    TextPart,
    ThoughtDelta,
    ToolCallEvent,
    ToolCallRequest,
    ToolResultMessage,
    Usage,
    UserMessage,
    subagent_provider,
)
from acp_server.models.script import ScriptedProvider, echo_chunks, load_script
from acp_server.models.spec import load_model

pytestmark = pytest.mark.anyio


def write_script(tmp_path: Path, script: Any, name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(script), encoding="utf-8")
    return str(path)


def scripted(tmp_path: Path, *responses: list[dict[str, Any]]) -> ModelProvider:
    return load_model(f"script:{write_script(tmp_path, {'responses': list(responses)})}")


def request(
    session_id: str = "s1", text: str = "hello", messages: list[ConversationItem] | None = None
) -> ModelRequest:
    return ModelRequest(
        session_id=session_id,
        system_prompt="",
        messages=[UserMessage(parts=[TextPart(text=text)])] if messages is None else messages,
        tools=[],
    )


async def collect(
    provider: ModelProvider, req: ModelRequest | None = None, signal: TurnSignal | None = None
) -> list[ModelEvent]:
    signal = TurnCancellation().signal if signal is None else signal
    return [event async for event in provider.stream(req or request(), signal)]


def texts(events: list[ModelEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]


def finish_of(events: list[ModelEvent]) -> str:
    assert isinstance(events[-1], Finish)
    assert sum(isinstance(e, Finish) for e in events) == 1
    assert isinstance(events[-2], Usage), "Usage comes right before Finish"
    return events[-1].reason


# --- events -----------------------------------------------------------------------------------


async def test_text_and_thought_events_are_one_chunk_each_then_stop(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"thought": "let me see"}, {"text": "Hi "}, {"text": "there"}])
    events = await collect(provider)
    assert events[:3] == [
        ThoughtDelta(text="let me see"),
        TextDelta(text="Hi "),
        TextDelta(text="there"),
    ]
    assert finish_of(events) == "stop"


async def test_repeat_yields_n_identical_chunks_with_optional_delay(tmp_path: Path) -> None:
    provider = scripted(
        tmp_path, [{"text": "ab", "repeat": 1000}, {"text": "x", "repeat": 3, "delay_ms": 1}]
    )
    events = await collect(provider)
    assert texts(events) == ["ab"] * 1000 + ["x"] * 3
    assert finish_of(events) == "stop"


async def test_echo_streams_last_user_message_word_by_word(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"echo": True}])
    original = "  first line\n second\tline  "
    history: list[ConversationItem] = [
        UserMessage(parts=[TextPart(text="an older message")]),
        AssistantMessage(text="reply"),
        UserMessage(parts=[TextPart(text=original), ImagePart(data="AAAA", mime_type="image/png")]),
    ]
    chunks = texts(await collect(provider, request(messages=history)))
    assert chunks == ["  first ", "line\n ", "second\t", "line  "]
    assert "".join(chunks) == original


@given(st.text())
def test_echo_chunks_join_back_to_the_original(text: str) -> None:
    chunks = echo_chunks(text)
    assert "".join(chunks) == text
    assert all(chunk for chunk in chunks)
    assert len(chunks) == max(len(text.split()), 1 if text else 0)


async def test_load_model_echo_echoes_the_prompt(tmp_path: Path) -> None:
    provider = load_model("echo")
    assert provider.name == "echo"
    events = await collect(provider, request(text="say this back"))
    assert texts(events) == ["say ", "this ", "back"]
    assert finish_of(events) == "stop"


async def test_tool_call_gets_session_scoped_ids_and_finishes_with_tool_calls(
    tmp_path: Path,
) -> None:
    provider = scripted(
        tmp_path,
        [
            {"text": "Reading."},
            {"tool_call": {"name": "read_file", "arguments": {"path": "a.txt"}}},
            {"tool_call": {"name": "list_dir"}},
        ],
    )
    events = await collect(provider)
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [
        ToolCallRequest(call_id="call_1", name="read_file", arguments={"path": "a.txt"}),
        ToolCallRequest(call_id="call_2", name="list_dir", arguments={}),
    ]
    assert finish_of(events) == "tool_calls"
    # The counter continues within the session and starts afresh in another one.
    again = await collect(provider)
    assert [e.call.call_id for e in again if isinstance(e, ToolCallEvent)] == ["call_3", "call_4"]
    other = await collect(provider, request(session_id="s2"))
    assert [e.call.call_id for e in other if isinstance(e, ToolCallEvent)] == ["call_1", "call_2"]


async def test_tool_call_arguments_are_fresh_per_call(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"tool_call": {"name": "t", "arguments": {"k": [1]}}}])
    first = next(e for e in await collect(provider) if isinstance(e, ToolCallEvent))
    first.call.arguments["k"].append(2)
    second = next(e for e in await collect(provider) if isinstance(e, ToolCallEvent))
    assert second.call.arguments == {"k": [1]}


async def test_tool_call_ids_continue_after_ids_already_in_the_conversation(
    tmp_path: Path,
) -> None:
    provider = scripted(tmp_path, [{"tool_call": {"name": "t"}}])
    history: list[ConversationItem] = [
        UserMessage(parts=[TextPart(text="go")]),
        AssistantMessage(
            text="", tool_calls=[ToolCallRequest(call_id="call_7", name="t", arguments={})]
        ),
        ToolResultMessage(call_id="call_7", output="done"),
    ]
    events = await collect(provider, request(messages=history))
    assert [e.call.call_id for e in events if isinstance(e, ToolCallEvent)] == ["call_8"]


@pytest.mark.parametrize("reason", ["max_tokens", "refusal"])
async def test_explicit_finish_wins_and_ends_the_response(tmp_path: Path, reason: str) -> None:
    provider = scripted(
        tmp_path,
        [
            {"text": "partial"},
            {"tool_call": {"name": "t"}},
            {"finish": reason},
            {"text": "never streamed"},
        ],
    )
    events = await collect(provider)
    assert texts(events) == ["partial"]
    assert finish_of(events) == reason


async def test_error_event_raises_model_error_with_its_message(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"text": "before"}, {"error": "rate limited"}])
    seen: list[ModelEvent] = []
    with pytest.raises(ModelError) as info:
        async for event in provider.stream(request(), TurnCancellation().signal):
            seen.append(event)
    assert info.value.message == "rate limited"
    assert str(info.value) == "rate limited"
    assert seen == [TextDelta(text="before")]


async def test_usage_counts_words_in_and_out(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"text": "one two"}, {"text": "three", "repeat": 2}])
    history: list[ConversationItem] = [
        UserMessage(parts=[TextPart(text="a b c")]),
        AssistantMessage(text="d e"),
        ToolResultMessage(call_id="call_1", output="f"),
    ]
    events = await collect(provider, request(messages=history))
    assert events[-2] == Usage(input_tokens=6, output_tokens=4)


# --- cursors ------------------------------------------------------------------------------------


async def test_responses_cycle_back_to_the_first(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"text": "R0"}], [{"text": "R1"}], [{"text": "R2"}])
    seen = [texts(await collect(provider)) for _ in range(5)]
    assert seen == [["R0"], ["R1"], ["R2"], ["R0"], ["R1"]]


async def test_each_session_has_its_own_cursor(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"text": "R0"}], [{"text": "R1"}])
    assert texts(await collect(provider, request("a"))) == ["R0"]
    assert texts(await collect(provider, request("a"))) == ["R1"]
    assert texts(await collect(provider, request("b"))) == ["R0"]
    assert texts(await collect(provider, request("a"))) == ["R0"]
    assert texts(await collect(provider, request("b"))) == ["R1"]


async def test_subagent_uses_its_own_responses_when_the_file_has_them(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        {
            "responses": [[{"text": "parent"}]],
            "subagent": {"responses": [[{"text": "child 0"}], [{"text": "child 1"}]]},
        },
    )
    provider = load_script(path)
    child = provider.for_subagent()
    assert child is provider.for_subagent() is subagent_provider(provider)
    assert child.name == provider.name == f"script:{path}"
    assert texts(await collect(child, request("child"))) == ["child 0"]
    assert texts(await collect(provider, request("parent"))) == ["parent"]
    assert texts(await collect(child, request("child"))) == ["child 1"]


async def test_subagent_falls_back_to_the_same_responses_with_own_cursors(
    tmp_path: Path,
) -> None:
    provider = load_script(
        write_script(tmp_path, {"responses": [[{"text": "R0"}], [{"text": "R1"}]]})
    )
    assert texts(await collect(provider, request("same-id"))) == ["R0"]
    child = provider.for_subagent()
    assert texts(await collect(child, request("same-id"))) == ["R0"]
    assert texts(await collect(provider, request("same-id"))) == ["R1"]


AN_HOUR_MS = 3_600_000
HANG_GUARD_S = 60.0
"""Only a delay that ignores the abort runs this long; it is no measure of speed."""


# --- cancellation -------------------------------------------------------------------------------


async def test_delay_is_interrupted_at_once_when_the_turn_is_cancelled(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"text": "before"}, {"delay_ms": AN_HOUR_MS}, {"text": "after"}])
    cancellation = TurnCancellation()
    seen: list[ModelEvent] = []

    async def abort_soon() -> None:
        await anyio.sleep(0.05)
        cancellation.abort(UserCancel())

    with anyio.fail_after(HANG_GUARD_S):  # the delay is an hour: only an abort ends it
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_soon)
            with pytest.raises(TurnAborted):
                async for event in provider.stream(request(), cancellation.signal):
                    seen.append(event)
    assert seen == [TextDelta(text="before")]


async def test_repeated_delayed_text_stops_between_chunks(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"text": "tick", "repeat": 1000, "delay_ms": AN_HOUR_MS}])
    cancellation = TurnCancellation()

    async def abort_soon() -> None:
        await anyio.sleep(0.05)
        cancellation.abort(UserCancel())

    with anyio.fail_after(HANG_GUARD_S):  # each delay is an hour: only an abort ends them
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_soon)
            with pytest.raises(TurnAborted):
                await collect(provider, signal=cancellation.signal)


async def test_no_events_after_abort(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"text": "chunk", "repeat": 100}, {"tool_call": {"name": "t"}}])
    cancellation = TurnCancellation()
    seen: list[ModelEvent] = []
    with pytest.raises(TurnAborted):
        async for event in provider.stream(request(), cancellation.signal):
            seen.append(event)
            if len(seen) == 3:
                cancellation.abort(UserCancel())
    assert seen == [TextDelta(text="chunk")] * 3


async def test_already_aborted_signal_yields_nothing_and_keeps_the_cursor(
    tmp_path: Path,
) -> None:
    provider = scripted(tmp_path, [{"text": "R0"}], [{"text": "R1"}])
    cancellation = TurnCancellation()
    cancellation.abort(UserCancel())
    with pytest.raises(TurnAborted):
        await collect(provider, signal=cancellation.signal)
    assert texts(await collect(provider)) == ["R0"]


async def test_abort_after_the_last_chunk_yields_no_usage_or_finish(tmp_path: Path) -> None:
    provider = scripted(tmp_path, [{"text": "only"}])
    cancellation = TurnCancellation()
    seen: list[ModelEvent] = []
    with pytest.raises(TurnAborted):
        async for event in provider.stream(request(), cancellation.signal):
            seen.append(event)
            cancellation.abort(UserCancel())
    assert seen == [TextDelta(text="only")]


# --- load-time errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"responses": [[', "invalid JSON"),
        ("[1, 2]", "Expected `object`, got `array`"),
        ("{}", "missing required field `responses`"),
        ('{"responses": []}', "`responses` is empty"),
        ('{"responses": [[]], "extra": 1}', "unknown field `extra`"),
        (
            '{"responses": [[{"text": "a"}], [{"text": "b"}, {"txt": "c"}]]}',
            "response 1, event 1: Object contains unknown field `txt` - at `$.responses[1][1]`",
        ),
        ('{"responses": [[{"text": 3}]]}', "response 0, event 0: Expected `str`, got `int`"),
        ('{"responses": [[{"finish": "stop"}]]}', "response 0, event 0: Invalid enum value"),
        ('{"responses": [[{"text": "a", "repeat": -1}]]}', "Expected `int` >= 0"),
        ('{"responses": [[{"text": "a", "error": "b"}]]}', "one kind, got text and error"),
        ('{"responses": [[{"repeat": 2}]]}', "`repeat` only goes with `text`"),
        ('{"responses": [[{"thought": "a", "delay_ms": 5}]]}', "`delay_ms` goes alone"),
        ('{"responses": [[{"echo": false}]]}', "`echo` must be true"),
        ('{"responses": [[{}]]}', "response 0, event 0: empty event"),
        ('{"responses": [[{"tool_call": {"arguments": {}}}]]}', "missing required field `name`"),
        (
            '{"responses": [[]], "subagent": {"responses": [[{"text": "a"}, {"bad": 1}]]}}',
            "subagent response 0, event 1: Object contains unknown field `bad`",
        ),
        ('{"responses": [[]], "subagent": {"responses": []}}', "subagent `responses` is empty"),
    ],
)
def test_invalid_script_names_the_path_and_the_problem(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ModelConfigError) as info:
        load_model(f"script:{path}")
    message = str(info.value)
    assert message.startswith(f"model script {path}: ")
    assert problem in message


def test_missing_script_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(ModelConfigError, match="cannot read: No such file") as info:
        load_model(f"script:{path}")
    assert str(path) in str(info.value)


def test_script_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="cannot read"):
        load_model(f"script:{tmp_path}")


def test_script_is_read_at_load_time(tmp_path: Path) -> None:
    path = Path(write_script(tmp_path, {"responses": [[{"text": "kept"}]]}))
    provider = load_model(f"script:{path}")
    assert isinstance(provider, ScriptedProvider)
    assert provider.name == f"script:{path}"
    path.unlink()
    # Nothing is read later: the provider already holds the script.
    events = anyio.run(collect, provider, backend="asyncio")
    assert texts(events) == ["kept"]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("openai:", "needs a model name: openai:MODEL"),
        ("anthropic:", "needs a model name: anthropic:MODEL"),
        ("gemini:pro", "unknown model spec 'gemini:pro'"),
        ("echoo", "unknown model spec 'echoo'"),
        ("", "unknown model spec ''"),
        ("script:", "needs a path"),
    ],
)
def test_unsupported_model_spec_is_a_config_error(spec: str, problem: str) -> None:
    with pytest.raises(ModelConfigError, match=problem):
        load_model(spec)


def test_subagent_provider_of_a_plain_provider_is_itself() -> None:
    class Plain:
        name = "plain"

        async def stream(self, request: ModelRequest, signal: TurnSignal) -> Any:
            yield Finish(reason="stop")

    plain = Plain()
    assert subagent_provider(plain) is plain
