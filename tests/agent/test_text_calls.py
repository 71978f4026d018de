"""Which messages are tool calls written as text: only a whole message that is one JSON
object (bare, fenced, or in `<tool_call>` tags) naming an offered tool with an arguments
object; everything else stays text."""

from __future__ import annotations

import pytest

from acp_server.agent.text_calls import TextCall, reads_text_calls, text_call
from acp_server.models.anthropic import AnthropicProvider
from acp_server.models.openai import OpenAIProvider

OFFERED = {"read_file": object(), "bash": object()}
READ = TextCall("read_file", {"path": "stats.py"})


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
    assert text_call(message, OFFERED) == READ


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
        "[1, 2]",
        '{"name": "read_file", "arguments": {"path": "stats.py"}',  # not JSON
        "The answer is 42.",
        "",
    ],
)
def test_anything_else_stays_text(message: str) -> None:
    assert text_call(message, OFFERED) is None


def test_on_by_default_only_for_compatible_servers_that_are_not_openai() -> None:
    assert reads_text_calls(OpenAIProvider("qwen", base_url="http://127.0.0.1:1/v1"))
    assert not reads_text_calls(OpenAIProvider("gpt-4o"))
    assert not reads_text_calls(AnthropicProvider("claude", api_key="k"))
    off = OpenAIProvider("qwen", base_url="http://127.0.0.1:1/v1", text_tool_calls=False)
    assert not reads_text_calls(off)
    assert reads_text_calls(AnthropicProvider("claude", api_key="k", text_tool_calls=True))
