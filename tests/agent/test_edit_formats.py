"""The edit formats' requests and how their turns read back to the model: the format's prompt
replaces only our default one, no tool that changes anything is offered, temperature 0 unless
the model's settings name one; an answer of edit blocks reads back as the text it was, the
blocks' results as one note after it, and the agent's own test runs not at all."""

from __future__ import annotations

import msgspec
import pytest

from acp_server.agent.compact_prompt import COMPACT_SYSTEM_PROMPT
from acp_server.agent.conversation import Conversation
from acp_server.agent.edit_blocks import Listing, Problem, Replacement, block_call, edits_applied
from acp_server.agent.edit_formats import (
    FORMAT_REMINDERS,
    SEARCH_REPLACE_PROMPT,
    WHOLE_FILE_PROMPT,
    edit_format_of,
    shaped_request,
)
from acp_server.agent.instructions import DEFAULT_SYSTEM_PROMPT
from acp_server.agent.test_loop import auto_test_of
from acp_server.models.base import (
    AssistantMessage,
    ModelRequest,
    TextPart,
    ToolCallRequest,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from acp_server.session import records as rec
from acp_server.tools.base import ToolOutput

AT = "2026-12-06T00:00:00.000Z"
ENVIRONMENT = "\n\n# Environment\nWorking directory: /w"
TOOLS = [
    ToolSpec(name=name, description=f"{name} does it. More words.", parameters={})
    for name in ("read_file", "write_file", "edit_file", "list_dir", "grep", "bash", "mcp__x__y")
]


class Configured:
    def __init__(self, edit_format: object = None, auto_test: object = None) -> None:
        self.edit_format = edit_format
        self.auto_test = auto_test


def request(system: str = DEFAULT_SYSTEM_PROMPT + ENVIRONMENT) -> ModelRequest:
    return ModelRequest(session_id="s", system_prompt=system, messages=[], tools=list(TOOLS))


def test_the_edit_format_is_the_configured_one_else_tool_calls() -> None:
    assert edit_format_of(Configured("whole_file")) == "whole_file"
    assert edit_format_of(Configured("search_replace")) == "search_replace"
    assert edit_format_of(Configured()) == "tool_calls"
    assert edit_format_of(Configured("diff")) == "tool_calls"
    assert edit_format_of(object()) == "tool_calls"


def test_auto_test_is_configured_else_on_for_text_formats_only() -> None:
    assert auto_test_of(Configured(), text_format=True)
    assert not auto_test_of(Configured(), text_format=False)
    assert auto_test_of(Configured(auto_test=True), text_format=False)
    assert not auto_test_of(Configured(auto_test=False), text_format=True)


@pytest.mark.parametrize(("edit_format", "prompt"), [
    ("whole_file", WHOLE_FILE_PROMPT), ("search_replace", SEARCH_REPLACE_PROMPT)
])  # fmt: skip
def test_a_text_format_request(edit_format: str, prompt: str) -> None:
    shaped = shaped_request(request(), edit_format, 200_000, DEFAULT_SYSTEM_PROMPT)  # type: ignore[arg-type]
    assert shaped.system_prompt == prompt + ENVIRONMENT
    assert [t.name for t in shaped.tools] == ["mcp__x__y"]  # looks and changes come as text
    assert shaped.temperature == 0


def test_a_text_format_keeps_a_client_prompt_and_a_temperature_asked_for() -> None:
    own = "You are the company's agent."
    shaped = shaped_request(request(own + ENVIRONMENT), "whole_file", 8192, own)
    assert shaped.system_prompt == own + ENVIRONMENT
    asked = ModelRequest(session_id="s", system_prompt="", messages=[], tools=[], temperature=0.3)
    assert shaped_request(asked, "whole_file", 8192, own).temperature == 0.3


def test_tool_calls_are_shaped_as_before() -> None:
    small = shaped_request(request(), "tool_calls", 8192, DEFAULT_SYSTEM_PROMPT)
    assert small.system_prompt == COMPACT_SYSTEM_PROMPT + ENVIRONMENT
    assert small.temperature is None
    large = request()
    assert shaped_request(large, "tool_calls", 32_768, DEFAULT_SYSTEM_PROMPT) is large


def test_blocks_become_calls_of_the_file_tools() -> None:
    assert block_call(Listing("a.py", "x\n"), "c1") == ToolCallRequest(
        call_id="c1", name="write_file", arguments={"path": "a.py", "content": "x\n"}
    )
    assert block_call(Replacement("a.py", "x\n", "y\n"), "c2") == ToolCallRequest(
        call_id="c2",
        name="edit_file",
        arguments={"path": "a.py", "old_text": "x\n", "new_text": "y\n"},
    )
    assert block_call(Replacement("new.py", "", "y\n"), "c3").name == "write_file"
    broken = block_call(Problem("a.py", "no REPLACE line"), "c4")
    assert broken.arguments == {}
    assert broken.arguments_error == (
        "an edit block of your answer could not be read (for a.py): no REPLACE line"
    )


def test_edits_are_applied_only_when_every_call_was_a_block_and_none_failed() -> None:
    calls = [ToolCallRequest(call_id=c, name="write_file", arguments={}) for c in ("a", "b")]
    done = {"a": ToolOutput("ok"), "b": ToolOutput("ok")}
    assert edits_applied(calls, done, frozenset({"a", "b"}))
    assert not edits_applied(calls, done, frozenset({"a"}))  # a call the model made itself
    assert not edits_applied(calls, {**done, "b": ToolOutput("no", failed=True)}, frozenset("ab"))


def answer(message_id: str, text: str, calls: list[rec.ToolCallRecord], **kw: object) -> rec.Record:
    return rec.AssistantMessage(
        turn_id="t", message_id=message_id, parts=[rec.TextPart(text=text)], tool_calls=calls,
        at=AT, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def result(call_id: str, output: str, title: str, status: str = "completed") -> rec.Record:
    return rec.ToolResult(
        turn_id="t",
        call_id=call_id,
        status=status,
        output=output,
        title=title,
        at=AT,  # type: ignore[arg-type]
    )


def test_an_answer_of_blocks_reads_back_as_its_text_and_its_results_as_one_note() -> None:
    listing = "a.py\n```\nx = 1\n```\nb.py\n```\ny = 2\n```\n"
    block = {"name": "write_file", "arguments": {}, "edit_block": True}
    records = [
        answer("m1", listing, [
            rec.ToolCallRecord(call_id="c1", **block),  # type: ignore[arg-type]
            rec.ToolCallRecord(call_id="c2", **block),  # type: ignore[arg-type]
        ]),
        result("c1", "Overwrote /w/a.py (1 line, previously 1)", "Write a.py"),
        result("c2", "Cannot write /w/b.py: denied", "Write b.py", "failed"),
        answer("m2", "Running the tests", [
            rec.ToolCallRecord(call_id="c3", name="bash", arguments={"command": "pytest"})
        ], origin="agent"),
        result("c3", "1 failed\n[exit code: 1]", "Run `pytest`", "failed"),
        rec.UserMessage(
            message_id="u2", content=[rec.TextPart(text="The tests fail.")], origin="context",
            turn_id="t", at=AT,
        ),
    ]  # fmt: skip
    items = list(Conversation(records).items)
    assert items == [
        AssistantMessage(text=listing, tool_calls=[]),
        UserMessage(
            parts=[
                TextPart(text="[Write a.py: done] Overwrote /w/a.py (1 line, previously 1)"),
                TextPart(text="[Write b.py: failed] Cannot write /w/b.py: denied"),
            ]
        ),
        UserMessage(parts=[TextPart(text="The tests fail.")]),
    ]
    assert not any(isinstance(item, ToolResultMessage) for item in items)


def test_attached_files_are_shown_as_listings_in_a_text_format() -> None:
    from acp_server.agent.conversation import part_for_model

    code = rec.ResourcePart(uri="file:///w/src/my%20grades.py", text="x = 1\n")
    fenced = rec.ResourcePart(uri="file:///elsewhere/README.md", text="```sh\nls\n```")
    message = UserMessage(
        parts=[TextPart(text="Fix it."), part_for_model(code), part_for_model(fenced)]
    )
    plain = ModelRequest(session_id="s", system_prompt="", messages=[message], tools=[])
    shaped = shaped_request(plain, "whole_file", 8192, DEFAULT_SYSTEM_PROMPT, cwd="/w")
    assert shaped.messages == [
        UserMessage(
            parts=[
                TextPart(text="Fix it."),
                TextPart(text="src/my grades.py\n```\nx = 1\n```"),
                TextPart(text="/elsewhere/README.md\n````\n```sh\nls\n```\n````"),
                TextPart(text=FORMAT_REMINDERS["whole_file"]),  # the last user message only
            ]
        )
    ]
    assert shaped_request(plain, "tool_calls", 8192, DEFAULT_SYSTEM_PROMPT, "/w").messages == [
        message
    ]
    later = msgspec.structs.replace(plain, messages=[message, AssistantMessage(text="Done.")])
    assert shaped_request(later, "whole_file", 8192, DEFAULT_SYSTEM_PROMPT).messages[1:] == [
        AssistantMessage(text="Done.")
    ]
