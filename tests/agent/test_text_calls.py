"""Which messages are tool calls written as text: only a whole message that is a sequence of
JSON objects (bare, fenced, or in `<tool_call>` tags) each naming an offered tool with an
arguments object; everything else stays text."""

from __future__ import annotations

import pytest

from acp_server.agent.text_calls import MAX_CALLS, TextCall, reads_text_calls, text_calls
from acp_server.models.anthropic import AnthropicProvider
from acp_server.models.openai import OpenAIProvider

OFFERED = {"read_file": object(), "bash": object()}
READ = TextCall("read_file", {"path": "stats.py"})
RUN = TextCall("bash", {"command": "python -m pytest -q"})
READ_JSON = '{"name": "read_file", "arguments": {"path": "stats.py"}}'
RUN_JSON = '{"name": "bash", "arguments": {"command": "python -m pytest -q"}}'


@pytest.mark.parametrize(
    "message",
    [
        '{"name": "read_file", "arguments": {"path": "stats.py"}}',
        '  {"name": "read_file", "parameters": {"path": "stats.py"}}\n',
        '```json\n{"name": "read_file", "arguments": {"path": "stats.py"}}\n```',
        '```\n{"name": "read_file", "arguments": {"path": "stats.py"}}```',
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "stats.py"}}\n</tool_call>',
        '{"name": "read_file", "arguments": "{\\"path\\": \\"stats.py\\"}"}',
    ],
)
def test_a_whole_message_naming_an_offered_tool_is_a_call(message: str) -> None:
    assert text_calls(message, OFFERED) == [READ]


@pytest.mark.parametrize(
    "message",
    [
        f"{READ_JSON}\n{RUN_JSON}",  # what Qwen2.5-Coder-1.5B wrote in the e2e run
        f"{READ_JSON}{RUN_JSON}",
        f"```json\n{READ_JSON}\n```\n\n```json\n{RUN_JSON}\n```",
        f"```json\n{READ_JSON}\n{RUN_JSON}\n```",
        f"<tool_call>\n{READ_JSON}\n</tool_call>\n<tool_call>\n{RUN_JSON}\n</tool_call>",
        f"```json\n{READ_JSON}\n```\n{RUN_JSON}",
    ],
)
def test_a_message_that_is_only_calls_is_each_of_them_in_order(message: str) -> None:
    assert text_calls(message, OFFERED) == [READ, RUN]


def test_more_calls_than_the_cap_stay_text() -> None:
    assert len(text_calls("\n".join([READ_JSON] * MAX_CALLS), OFFERED)) == MAX_CALLS
    assert text_calls("\n".join([READ_JSON] * (MAX_CALLS + 1)), OFFERED) == []


@pytest.mark.parametrize(
    "message",
    [
        'Here is the call: {"name": "read_file", "arguments": {"path": "stats.py"}}',
        '{"name": "read_file", "arguments": {"path": "stats.py"}}\nThen I will fix it.',
        '{"name": "write_file", "arguments": {"path": "x", "content": ""}}',  # not offered
        '{"name": "read_file"}',  # no arguments
        '{"name": "read_file", "arguments": ["stats.py"]}',
        '{"name": "read_file", "arguments": {}, "id": "1"}',  # another shape
        '{"tool": "read_file", "arguments": {"path": "stats.py"}}',
        '```json\n{"name": "read_file", "arguments": {}}\n```\n```json\n{}\n```',
        f"{READ_JSON}\nThen I run the tests:\n{RUN_JSON}",  # prose between calls
        f'{READ_JSON}\n{{"name": "write_file", "arguments": {{}}}}',  # one not offered
        f"{READ_JSON}\n[1]",
        f"{READ_JSON}\n```json\n{RUN_JSON}\n",  # an unclosed fence
        "{" * 100_000,  # deeper than any decoder's stack
        "```json\n```",
        "[1, 2]",
        '{"name": "read_file", "arguments": {"path": "stats.py"}',  # not JSON
        "The answer is 42.",
        "",
    ],
)
def test_anything_else_stays_text(message: str) -> None:
    assert text_calls(message, OFFERED) == []


def test_on_by_default_only_for_compatible_servers_that_are_not_openai() -> None:
    assert reads_text_calls(OpenAIProvider("qwen", base_url="http://127.0.0.1:1/v1"))
    assert not reads_text_calls(OpenAIProvider("gpt-4o"))
    assert not reads_text_calls(AnthropicProvider("claude", api_key="k"))
    off = OpenAIProvider("qwen", base_url="http://127.0.0.1:1/v1", text_tool_calls=False)
    assert not reads_text_calls(off)
    assert reads_text_calls(AnthropicProvider("claude", api_key="k", text_tool_calls=True))
