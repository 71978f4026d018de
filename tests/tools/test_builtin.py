"""The built-in tool set (acp_server/tools/builtin/): stable names, kinds and schemas, titles
and locations that never fail, bad arguments as failed outputs naming the argument, and an
already aborted turn signal stopping every tool before any side effect.
"""

from __future__ import annotations

from typing import Any

import anyio
import jsonschema
import pytest

from acp_server.cancellation import TurnAborted, TurnCancellation
from acp_server.process.background import BackgroundItems
from acp_server.tools.base import Location
from acp_server.tools.builtin import builtin_tools
from acp_server.tools.local_commands import LocalCommands
from acp_server.tools.local_files import LocalFiles
from tests.support.tool_call import a_call
from tests.support.tool_workspace import Workspace
from tests.support.turns import aborted_signal

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("module_subreaper")]


STABLE_NAMES = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
    "bash",
    "todo_write",
    "web_fetch",
]


def test_the_stable_names_kinds_and_schemas(ws: Workspace) -> None:
    tools = builtin_tools(ws.path_roots, LocalFiles(), LocalCommands())
    assert [tool.name for tool in tools] == STABLE_NAMES
    kinds = {tool.name: tool.kind for tool in tools}
    assert kinds == {
        "read_file": "read",
        "write_file": "edit",
        "edit_file": "edit",
        "list_dir": "read",
        "glob": "search",
        "grep": "search",
        "bash": "execute",
        "todo_write": "think",
        "web_fetch": "fetch",
    }
    arguments = {
        "read_file": {"path", "offset", "limit"},
        "write_file": {"path", "content"},
        "edit_file": {"path", "old_text", "new_text"},
        "list_dir": {"path"},
        "glob": {"pattern", "include_ignored"},
        "grep": {"pattern", "path", "include_ignored"},
        # needs, background: optional, added compatibly
        "bash": {"command", "timeout_ms", "needs", "background"},
        "todo_write": {"entries"},
        "web_fetch": {"url", "offset"},
    }
    for tool in tools:
        schema = tool.parameters
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["properties"]) == arguments[tool.name]
        assert set(schema["required"]) <= set(schema["properties"])
        assert len(tool.description) > 80


async def test_with_background_items_bash_output_and_bash_stop_follow_bash(
    ws: Workspace,
) -> None:
    async with anyio.create_task_group() as tg:
        items = BackgroundItems(tg, None)
        tools = builtin_tools(ws.path_roots, LocalFiles(), LocalCommands(), background=items)
        names = [tool.name for tool in tools]
        assert names[6:9] == ["bash", "bash_output", "bash_stop"]
        for tool in tools[7:9]:
            assert set(tool.parameters["properties"]) == {"id"}
            assert tool.parameters["required"] == ["id"]
        assert [tool.kind for tool in tools[7:9]] == ["read", "execute"]


async def test_titles_and_locations_never_fail(ws: Workspace) -> None:
    root = str(ws.root)
    t = ws.tools
    assert t["read_file"].title({"path": "src/x.py"}) == "Read src/x.py"
    assert t["read_file"].title({"path": f"{root}/src/x.py"}) == "Read src/x.py"
    assert t["read_file"].title({"path": "x.py", "offset": 5, "limit": 10}) == (
        "Read x.py (lines 5-14)"
    )
    assert t["read_file"].locations({"path": "src/x.py", "offset": 7}) == [
        Location(f"{root}/src/x.py", 7)
    ]
    assert t["write_file"].title({"path": "a.txt"}) == "Write a.txt"
    assert t["edit_file"].title({"path": "src/x.py"}) == "Edit src/x.py"
    assert t["edit_file"].locations({"path": "../outside/secret.txt"}) == [
        Location(str(ws.outside / "secret.txt"))
    ]
    assert t["list_dir"].title({}) == "List ."
    assert t["list_dir"].locations({}) == [Location(root)]
    assert t["glob"].title({"pattern": "**/*.py"}) == "Find `**/*.py`"
    assert t["grep"].title({"pattern": "def main", "path": "src"}) == "Search `def main` in src"
    assert t["bash"].title({"command": "make test"}) == "Run `make test`"
    long_title = t["bash"].title({"command": "echo " + "x" * 200})
    assert long_title.startswith("Run `echo xxx") and long_title.endswith("…`")
    assert len(long_title) < 80
    assert t["bash"].title({"command": "make\nmake install"}) == "Run `make…`"
    assert t["todo_write"].title({"entries": []}) == "Update plan"
    assert t["web_fetch"].title({"url": "https://example.com/a"}) == "Fetch https://example.com/a"
    assert t["web_fetch"].title({"url": 3}) == "Fetch a web page"
    for tool in t.values():  # garbage in: a title and locations all the same
        assert tool.title({"path": 3, "pattern": None, "command": ["x"]})
        assert list(tool.locations({"path": 3})) in ([], [Location(root)])


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("read_file", {}, "missing required argument `path`"),
        ("read_file", {"path": 3}, "Expected `str`, got `int` (argument `path`)"),
        ("read_file", {"path": "a", "offset": 0}, "(argument `offset`)"),
        ("read_file", {"path": "a", "limit": "ten"}, "(argument `limit`)"),
        ("read_file", {"path": "a", "bogus": 1}, "unknown argument `bogus`"),
        ("write_file", {"path": "a"}, "missing required argument `content`"),
        ("edit_file", {"path": "a", "old_text": "x"}, "missing required argument `new_text`"),
        ("glob", {"pattern": None}, "(argument `pattern`)"),
        ("grep", {"pattern": "x", "path": 1}, "(argument `path`)"),
        ("bash", {"command": "true", "timeout_ms": -5}, "(argument `timeout_ms`)"),
        ("todo_write", {"entries": "do it"}, "(argument `entries`)"),
        ("web_fetch", {}, "missing required argument `url`"),
        ("web_fetch", {"url": "https://example.com", "offset": -1}, "(argument `offset`)"),
        (
            "todo_write",
            {"entries": [{"priority": "high"}]},
            "missing required field `content` (argument `entries[0]`)",
        ),
        (
            "todo_write",
            {"entries": [{"content": "x", "status": "done"}]},
            "(argument `entries[0].status`)",
        ),
    ],
)
async def test_bad_arguments_fail_naming_the_argument(
    ws: Workspace, name: str, arguments: dict[str, Any], expected: str
) -> None:
    output = await ws.tools[name].run(arguments, a_call(), TurnCancellation().signal)
    assert output.failed
    assert output.text.startswith(f"Invalid arguments for {name}: ")
    assert expected in output.text


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"path": "a.txt"}),
        ("write_file", {"path": "new.txt", "content": "x"}),
        ("edit_file", {"path": "a.txt", "old_text": "a", "new_text": "b"}),
        ("list_dir", {}),
        ("glob", {"pattern": "**"}),
        ("grep", {"pattern": "a"}),
        ("bash", {"command": "touch marker"}),
        ("todo_write", {"entries": [{"content": "x"}]}),
        ("web_fetch", {"url": "http://127.0.0.1:9/"}),
        ("read_file", {}),  # even bad arguments: the abort comes first
    ],
)
async def test_an_aborted_signal_raises_before_any_side_effect(
    ws: Workspace, name: str, arguments: dict[str, Any]
) -> None:
    ws.file("a.txt", "a\n")
    before = sorted(p.name for p in ws.root.iterdir())
    with pytest.raises(TurnAborted):
        await ws.tools[name].run(arguments, a_call(), aborted_signal())
    assert sorted(p.name for p in ws.root.iterdir()) == before
    assert (ws.root / "a.txt").read_text() == "a\n"
