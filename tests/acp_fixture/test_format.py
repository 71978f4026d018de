"""The fixture format (acp_fixture/format.py), parsed in process: a header and directives, bare
JSON-RPC lines as `send`, comments and blank lines skipped, `${name}` substitution with `$$`, and
dotted lookups in a response, each error naming the file and line. Bad lines through the
console script as well:
tests/acp_fixture/test_runner.py::test_an_invalid_fixture_is_refused_naming_file_and_line."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_fixture.format import (
    CancelAfterUpdates,
    FixtureError,
    Header,
    Note,
    Restart,
    Send,
    SendRaw,
    ShowFile,
    Wait,
    lookup,
    parse_fixture,
    request_key,
    substitute,
)


def fixture(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "case.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_fixture_is_its_header_and_directives_in_order(tmp_path: Path) -> None:
    path = fixture(
        tmp_path,
        "# a comment",
        '{"fixture": {"model": "echo", "files": {"a/b.txt": "x"}, "timeout": 5}}',
        "",
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}',
        "// another comment",
        '{"send": {"id": 2, "method": "session/new"}}',
        '{"wait": {"id": 2}, "save": {"session": "result.sessionId"}}',
        '{"send_raw": "not json"}',
        '{"cancel_after_updates": 2}',
        '{"restart": true}',
        '{"note": "then"}',
        '{"show_file": "a/b.txt"}',
        '{"wait": "all"}',
    )
    parsed = parse_fixture(path)
    assert parsed.header == Header(model="echo", files={"a/b.txt": "x"}, timeout=5.0)
    assert parsed.directives == (
        Send(4, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        Send(6, {"jsonrpc": "2.0", "id": 2, "method": "session/new"}),
        Wait(7, request_key(2), {"session": "result.sessionId"}),
        SendRaw(8, "not json"),
        CancelAfterUpdates(9, 2),
        Restart(10),
        Note(11, "then"),
        ShowFile(12, "a/b.txt"),
        Wait(13, "all", {}),
    )


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"note": "x"}', '{"fixture": {}}'], "case.jsonl:2: the fixture header must come before"),
        (['["a list"]'], "case.jsonl:1: each line must be a JSON object"),
        (['{"note": "x", "restart": true}'], "case.jsonl:1: a directive has exactly one key"),
        (
            ['{"shout": "x"}'],
            "case.jsonl:1: unknown directive 'shout'; known: cancel_after_updates",
        ),
        (['{"fixture": {"files": {"../x": ""}}}'], "fixture.files paths must be relative: '../x'"),
        (['{"fixture": {"timeout": true}}'], "fixture.timeout must be a positive number"),
        (['{"fixture": {"args": [1]}}'], "fixture.args must be a list of strings"),
        (['{"wait": "all", "save": {"x": "result"}}'], 'save needs one response, not "all"'),
        (['{"wait": {"id": 1}, "save": {"1x": "result"}}'], "invalid variable name '1x'"),
        (['{"wait": "soon"}'], 'wait takes "response", "all" or {"id": ID}'),
        (['{"send_raw": "two\\nlines"}'], "send_raw takes one line of text"),
        (['{"restart": 1}'], 'write restart as {"restart": true}'),
        (['{"show_file": ""}'], "show_file takes a path relative to the workspace"),
    ],
)
def test_a_bad_line_is_refused_naming_file_and_line(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    with pytest.raises(FixtureError) as refused:
        parse_fixture(fixture(tmp_path, *lines))
    assert message in str(refused.value)
    assert str(refused.value).startswith(str(tmp_path / "case.jsonl"))


def test_a_missing_file_is_a_fixture_error(tmp_path: Path) -> None:
    with pytest.raises(FixtureError, match="cannot read the fixture"):
        parse_fixture(tmp_path / "gone.jsonl")


def test_substitution_reaches_nested_strings_and_dollar_dollar_is_a_dollar() -> None:
    value = {"a": ["${session}", {"b": "cost $$5 in ${cwd}"}], "n": 3}
    assert substitute(value, {"session": "s1", "cwd": "/w"}, "f:1") == {
        "a": ["s1", {"b": "cost $5 in /w"}],
        "n": 3,
    }


def test_an_unset_variable_names_the_line_and_what_is_set() -> None:
    with pytest.raises(FixtureError) as refused:
        substitute("${later}", {"session": "s1"}, "case.jsonl:4")
    assert str(refused.value) == "case.jsonl:4: ${later} is not set yet (set: session)"


def test_a_lookup_follows_keys_and_list_indexes_or_names_the_missing_path() -> None:
    frame = {"result": {"options": [{"optionId": "allow"}, {"optionId": "reject"}]}}
    assert lookup(frame, "result.options.1.optionId", "f:1") == "reject"
    with pytest.raises(FixtureError) as refused:
        lookup(frame, "result.options.2", "f:1")
    assert str(refused.value) == "f:1: the response has no 'result.options.2'"
