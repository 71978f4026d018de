"""The start of a tool call written as text, seen while the message streams: a bare, fenced or
tagged object whose complete `name` names an offered tool, however the chunks split it; prose
first, an unknown tool or a key a call cannot have stop the watch; each character is looked at
once; what is known of the arguments is an object of their complete members."""

from __future__ import annotations

import pytest

from acp_server.agent.text_call_start import CallStart
from acp_server.agent.text_calls import text_calls

OFFERED = {"read_file": object(), "bash": object()}
READ = '{"name": "read_file", "arguments": {"path": "stats.py", "limit": 20}}'


def watched(text: str, size: int) -> CallStart:
    """`text` fed to a watcher in chunks of `size` characters."""
    watch = CallStart(OFFERED)
    for at in range(0, len(text), size):
        watch.feed(text[at : at + size])
    return watch


CALLS = [
    READ,
    f"  \n{READ}",
    f"```json\n{READ}\n```",
    f"```\n{READ}```",
    f"``` \t\n  {READ}\n```",
    f"<tool_call>\n{READ}\n</tool_call>",
    '{"arguments": {"path": "stats.py", "limit": 20}, "name": "read_file"}',
    '{"name": "read_\\u0066ile", "arguments": {"path": "stats.py", "limit": 20}}',
]


@pytest.mark.parametrize("text", CALLS)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_a_call_is_seen_however_the_chunks_split_it(text: str, size: int) -> None:
    watch = watched(text, size)
    assert watch.name == "read_file"
    assert watch.arguments() == {"path": "stats.py", "limit": 20}
    assert not watch.watching  # the first object has closed
    assert text_calls(text, OFFERED)  # and the end-of-message check agrees


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_the_name_is_known_once_its_string_is_complete(size: int) -> None:
    head = '```json\n{"name": "bash'
    watch = watched(head, size)
    assert watch.name is None and watch.watching  # "bash" may go on: "bash_x"
    watch.feed('", "arg')
    assert watch.name == "bash"
    assert watch.arguments() is None  # the arguments have not begun


def test_what_is_known_of_the_arguments_is_their_complete_members() -> None:
    watch = watched('{"name": "bash", "arguments": {', 5)
    assert watch.arguments() == {}
    watch.feed('"command": "pytest -q", "timeout_ms": 12')
    assert watch.arguments() == {"command": "pytest -q"}  # 12 may go on: 120
    watch.feed('0, "x": {"y": [1, "}, ]"]')
    assert watch.arguments() == {"command": "pytest -q", "timeout_ms": 120}
    watch.feed("}}")
    assert watch.arguments() == {"command": "pytest -q", "timeout_ms": 120, "x": {"y": [1, "}, ]"]}}
    assert watch.watching  # the call's object is still open
    watch.feed("}\nand some prose")
    assert not watch.watching


def test_arguments_that_do_not_parse_show_nothing() -> None:
    watch = watched('{"name": "bash", "arguments": {"command": nonsense, "more": 1', 3)
    assert watch.name == "bash"
    assert watch.arguments() is None


def test_arguments_as_a_json_string_are_watched_without_raw_input() -> None:
    watch = watched('{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}', 2)
    assert watch.name == "bash"
    assert watch.arguments() is None


@pytest.mark.parametrize(
    "text",
    [
        'Here is the call: {"name": "bash", "arguments": {}}',
        '{"name": "rm_rf", "arguments": {}}',  # not an offered tool
        '{"tool": "bash", "arguments": {}}',  # a key a call cannot have
        '{"name": 7, "arguments": {}}',
        '{"arguments": {"command": "ls"}}',  # closed without a name
        '````json\n{"name": "bash", "arguments": {}}',
        '```json x\n{"name": "bash", "arguments": {}}',
        '```python\nprint({"name": "bash"})',
        '<tool_calls>{"name": "bash", "arguments": {}}',
        '[{"name": "bash", "arguments": {}}]',
        '{"name": "' + "b" * 200 + '", "arguments": {}}',
    ],
)
@pytest.mark.parametrize("size", [1, 5, 1000])
def test_text_that_cannot_be_a_call_is_not_announced(text: str, size: int) -> None:
    watch = watched(text, size)
    assert watch.name is None
    assert not watch.watching


@pytest.mark.parametrize(
    "text", ['{"name": "bash", "arguments": [1]}', '{"name": "bash", "extra": {"command": "ls"}}']
)
def test_a_start_that_goes_wrong_after_the_name_stops_the_watch(text: str) -> None:
    # The name was announced already; the end-of-message check finds no call, and the loop
    # closes the announcement (tests/e2e/test_text_tool_calls.py).
    watch = watched(text, 2)
    assert watch.name == "bash"
    assert not watch.watching
    assert watch.arguments() is None
    assert text_calls(text, OFFERED) == []


def test_prose_stops_the_watch_at_its_first_character() -> None:
    watch = CallStart(OFFERED)
    watch.feed("I")
    assert not watch.watching
    for _ in range(100_000):
        watch.feed("t is all prose, no call. ")
    assert watch.examined == 1
    assert watch.name is None


def test_a_huge_call_is_read_once() -> None:
    content = "x" * 20 + '\\"' + "y" * 1_000_000
    text = '{"name": "bash", "arguments": {"command": "' + content + '"}}'
    watch = watched(text, 3)
    assert watch.name == "bash"
    assert watch.examined == len(text)  # each character once, never the text again per chunk
    assert watch.arguments() == {"command": "x" * 20 + '"' + "y" * 1_000_000}


def test_after_the_first_object_nothing_more_is_read() -> None:
    watch = watched(READ, 4)
    seen = watch.examined
    for _ in range(1000):
        watch.feed('\n{"name": "bash", "arguments": {}}')
    assert watch.examined == seen == len(READ)
    assert watch.name == "read_file"
