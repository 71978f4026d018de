"""Where a change goes, "add an ACP method" (docs/architecture.md): a method's row is written
once, in the method table, and its route beside its handler. Checked on the source:

- `MethodSpec(...)` (a row: a method's name, params and result types) is built only in a
  protocol version's method table (`acp_protocol/methods.py`, `acp_protocol/v2/methods.py`);
- every `Route(...)` / `NotificationRoute(...)` of the bridge names a row of a table
  (`V1.session_load`, `V2.session_resume`), never a params type, and a handler of its own
  group (`self.load_session`, a method of the class that declares the route), so the handler
  and its route are one file;
- the list on the architecture page has at most 3 files, and they exist.

The checker itself is tested on a small made-up tree, so a broken walk cannot pass silently.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from acp_protocol.methods import V1, MethodSpec
from acp_protocol.v2.methods import V2

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("acp_protocol", "acp_server", "acp_fixture")
TABLE_MODULE = "acp_protocol/methods.py"
TABLE_MODULES = frozenset({TABLE_MODULE, "acp_protocol/v2/methods.py"})
"""Where rows are built: one method table per protocol version."""
ROUTE_TYPES = frozenset({"Route", "NotificationRoute"})
TABLE = "V1"
"""The method table's class: a route's first argument is one of its rows (or of the v2 table's,
`V2`, for a route of a v2 connection)."""
TABLES = {"V1": V1, "V2": V2}
MAX_FILES = 3


def _called(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_row(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in TABLES
        and isinstance(getattr(TABLES[node.value.id], node.attr, None), MethodSpec)
    )


def _route_problems(node: ast.Call, methods: set[str] | None) -> list[str]:
    if methods is None:
        return ["a route is declared by the class of its handler's group"]
    problems = []
    if len(node.args) != 2 or node.keywords:
        return ["a route takes two arguments: a row of V1 and a handler"]
    row, handler = node.args
    if not _is_row(row):
        problems.append(f"names {ast.unparse(row)}, not a row of {TABLE}")
    own = (
        isinstance(handler, ast.Attribute)
        and isinstance(handler.value, ast.Name)
        and handler.value.id == "self"
        and handler.attr in methods
    )
    if not own:
        problems.append(f"handler {ast.unparse(handler)} is not a method of its own class")
    return problems


def route_violations(root: Path) -> list[str]:
    """Every row built outside the table module and every route that breaks the rule, as
    `file:line: why`."""
    found: list[str] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(), relative)
            classes = {
                id(call): {
                    item.name
                    for item in cls.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                }
                for cls in ast.walk(tree)
                if isinstance(cls, ast.ClassDef)
                for call in ast.walk(cls)
                if isinstance(call, ast.Call)
            }
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                called = _called(node)
                where = f"{relative}:{node.lineno}"
                if called == "MethodSpec" and relative not in TABLE_MODULES:
                    found.append(f"{where}: a method's row is written in a method table only")
                elif called in ROUTE_TYPES and relative != "acp_server/rpc/dispatch.py":
                    problems = _route_problems(node, classes.get(id(node)))
                    found.extend(f"{where}: {problem}" for problem in problems)
    return found


def test_rows_live_in_the_method_table_and_routes_beside_their_handlers() -> None:
    assert route_violations(REPO) == []


def test_the_bridge_declares_routes() -> None:
    # The walk sees the real routes: one per method the agent serves.
    routes = [
        node
        for path in (REPO / "acp_server").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and _called(node) in ROUTE_TYPES
    ]
    assert len(routes) >= 14


def change_list(page: str, heading: str) -> list[str]:
    """The numbered items under `### heading` of the architecture page."""
    section = page.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\d+\. (.*)$", section, re.MULTILINE)


def test_adding_a_method_touches_the_listed_files_and_no_more() -> None:
    items = change_list((REPO / "docs" / "architecture.md").read_text(), "Add an ACP method")
    assert 1 <= len(items) <= MAX_FILES
    named = [re.match(r"`([^`]+)`", item) for item in items]
    assert all(named), items
    files = [match.group(1) for match in named if match]
    assert files[:2] == [TABLE_MODULE, "acp_server/acp/methods/GROUP.py"]
    # Each exists for a group and a test we have.
    examples = {"GROUP": "lifecycle", "NAME": "sessions"}
    for name in files:
        for placeholder, example in examples.items():
            name = name.replace(placeholder, example)
        assert (REPO / name).is_file(), name


def write(root: Path, relative: str, source: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


GROUP = """
class Group:
    def routes(self):
        return [{route}]

    async def load(self, request, params):
        return None
"""


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (GROUP.format(route="Route(LoadSessionWithPrompt, self.load)"), "not a row of V1"),
        (GROUP.format(route="Route(V1.no_such_method, self.load)"), "not a row of V1"),
        (GROUP.format(route="Route(V1.session_load, other.load)"), "not a method of its own"),
        (GROUP.format(route="Route(V1.session_load, self.missing)"), "not a method of its own"),
        (GROUP.format(route="Route(V1.session_load)"), "takes two arguments"),
        ("ROUTES = [Route(V1.session_load, load)]\n", "declared by the class"),
        ("ROW = MethodSpec('x', dict, None, 'agent')\n", "written in a method table only"),
    ],
)
def test_the_checker_reports_a_route_or_row_out_of_place(
    tmp_path: Path, source: str, reason: str
) -> None:
    write(
        tmp_path,
        "acp_server/acp/methods/group.py",
        GROUP.format(route="Route(V1.session_load, self.load)"),
    )
    write(tmp_path, TABLE_MODULE, "ROW = MethodSpec('x', dict, None, 'agent')\n")
    assert route_violations(tmp_path) == []
    write(tmp_path, "acp_server/acp/x.py", source)
    found = route_violations(tmp_path)
    assert len(found) == 1 and reason in found[0], found
