"""Imports point downward only: the layer map of
docs/rfc/implemented/architecture/2026-12-01-layers-and-bridge.md, checked on the source.

Every import counts, including function-local ones and those under `TYPE_CHECKING`: a type-only
import upward is still a dependency upward. The checker itself is tested on a small made-up tree,
so a broken walk cannot pass silently.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("acp_protocol", "acp_server", "acp_fixture")

LAYERS: tuple[frozenset[str], ...] = (
    # The leaves: the turn signal, the approval verdicts, ids, redaction, the XDG dirs, text
    # made printable, the version. Import nothing.
    frozenset({"acp_server", "cancellation", "verdicts", "ids", "redaction", "paths", "printable"}),
    frozenset({"acp_protocol"}),  # wire types only
    frozenset({"rpc"}),  # the JSON-RPC peer over byte streams
    frozenset({"models", "tools", "process", "session"}),  # what the runtime is built from
    frozenset({"agent"}),  # the runtime
    frozenset({"extensions"}),  # hooks and MCP servers: plug-ins of the runtime
    frozenset({"acp"}),  # the ACP bridge
    # the process and its tools
    frozenset({"server", "cli", "config", "__main__", "determinism", "firstrun", "acp_fixture"}),
)
"""Bottom to top. A unit may import its own layer's units and those below, never above."""

LEAVES = LAYERS[0]
RUNTIME = frozenset({"agent", "session", "models", "tools", "process"})
"""Never import the wire types or the peer: the bridge, subagents and tests drive the runtime
in exactly the same way (ARCHITECTURE.md)."""
PUBLIC_FACE_ONLY = {"acp": "agent", "extensions": "agent"}
"""Importer unit -> unit it may import only through the package itself (its `__init__`)."""
READ_AT_THE_TOP = {"config": frozenset({"cli"})}
"""Unit -> the only units that may import it: the config file is read by the command line alone
(`setup` and `doctor` get its path and reader from it), and each section goes down as its
owner's type."""
FORBIDDEN = {("models", "tools"): "models never import tools (config sections live with tools)"}
"""Edges between units of one layer that must not exist."""

Edge = tuple[str, str, str, int]
"""(importing module, imported module, file, line)."""


def unit_of(module: str) -> str:
    """The layer unit of a dotted module name: a package below acp_server, or a root package."""
    parts = module.split(".")
    if parts[0] != "acp_server" or len(parts) == 1:
        return parts[0]
    return parts[1]


def imports(root: Path) -> Iterator[Edge]:
    """Every import of a project module by a project module under `root`."""
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            module = ".".join(parts)
            here = parts if is_package else parts[:-1]
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = here[: len(here) - node.level + 1]
                        target = ".".join([*base, node.module] if node.module else base)
                    else:
                        target = node.module or ""
                    # `from package import name` imports a submodule when `name` is one
                    targets = sorted(
                        {
                            f"{target}.{alias.name}"
                            if _is_module(root, f"{target}.{alias.name}")
                            else target
                            for alias in node.names
                        }
                    )
                else:
                    continue
                for target in targets:
                    if target.split(".")[0] in PACKAGES:
                        yield module, target, str(path.relative_to(root)), node.lineno


def _is_module(root: Path, dotted: str) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def rank(unit: str) -> int:
    for index, layer in enumerate(LAYERS):
        if unit in layer:
            return index
    raise AssertionError(f"{unit!r} is in no layer: add it to LAYERS (and to the RFC's map)")


def violations(root: Path) -> list[str]:
    """Every import that breaks a layer rule, as `file:line: why`."""
    found: list[str] = []
    for module, target, path, line in imports(root):
        source, dest = unit_of(module), unit_of(target)
        if source == dest:
            continue
        where = f"{path}:{line}: {module} imports {target}"
        if source in LEAVES:
            found.append(f"{where}: a leaf imports nothing of the project")
        elif rank(dest) > rank(source):
            found.append(f"{where}: {source} sits below {dest}")
        elif source in RUNTIME and dest in ("acp_protocol", "rpc"):
            found.append(f"{where}: the runtime never sees wire types or the peer")
        elif PUBLIC_FACE_ONLY.get(source) == dest and target != f"acp_server.{dest}":
            found.append(f"{where}: {source} imports {dest} only from acp_server.{dest}")
        elif dest in READ_AT_THE_TOP and source not in READ_AT_THE_TOP[dest]:
            found.append(f"{where}: {dest} is read by the CLI alone")
        elif (source, dest) in FORBIDDEN:
            found.append(f"{where}: {FORBIDDEN[source, dest]}")
    return found


def package_cycles(root: Path) -> list[list[str]]:
    """Cycles between units of the same layer (imports between layers point one way)."""
    graph: dict[str, set[str]] = {}
    for module, target, _, _ in imports(root):
        source, dest = unit_of(module), unit_of(target)
        if source != dest:
            graph.setdefault(source, set()).add(dest)
    cycles: list[list[str]] = []

    def visit(unit: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(unit, ())):
            if nxt == path[0]:
                cycles.append([*path, nxt])
            elif nxt not in path and nxt > path[0]:
                visit(nxt, [*path, nxt])

    for start in sorted(graph):
        visit(start, [start])
    return cycles


def test_no_import_points_upward() -> None:
    assert violations(REPO) == []


def test_no_cycle_between_packages() -> None:
    assert package_cycles(REPO) == []


def module_cycles(root: Path) -> list[list[str]]:
    """Cycles between modules (type-only imports included): each as the modules it passes,
    from its smallest name back to it."""
    graph: dict[str, set[str]] = {}
    for module, target, _, _ in imports(root):
        if module != target:
            graph.setdefault(module, set()).add(target)
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(module, ())):
            if nxt == path[0]:
                cycles.append([*path, nxt])
            elif nxt not in path and nxt > path[0]:
                visit(nxt, [*path, nxt])

    for start in sorted(graph):
        visit(start, [start])
    return cycles


KNOWN_CYCLES: dict[str, str] = {}
"""Cycles that landed while this rule did, by their first two modules, each with why; their
owner removes them (every cycle through both modules is let through)."""


def test_no_cycle_between_modules() -> None:
    # Issue 36: the router and its jsonrpcserver engine imported each other (the engine for
    # the router's types, under TYPE_CHECKING); it was the one cycle left.
    known = [pair.split(" -> ") for pair in KNOWN_CYCLES]
    unknown = [
        cycle
        for cycle in module_cycles(REPO)
        if not any(first in cycle and second in cycle for first, second in known)
    ]
    assert unknown == []


def test_every_unit_has_a_layer() -> None:
    units = {unit_of(name) for edge in imports(REPO) for name in edge[:2]}
    assert {"acp", "agent", "tools", "cancellation", "acp_protocol"} <= units
    for unit in units:
        rank(unit)


def write(root: Path, relative: str, source: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


@pytest.mark.parametrize(
    ("relative", "source", "reason"),
    [
        ("acp_server/tools/x.py", "from acp_server.agent import Agent\n", "tools sits below agent"),
        (
            "acp_server/models/x.py",
            "def f():\n    from ..acp import connection\n",
            "models sits below acp",
        ),
        (
            "acp_server/process/x.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from acp_server.agent.loop import AgentLoop\n",
            "process sits below agent",
        ),
        ("acp_server/cancellation.py", "import acp_server.ids\n", "a leaf imports nothing"),
        ("acp_protocol/x.py", "from acp_server.rpc import peer\n", "acp_protocol sits below rpc"),
        ("acp_server/session/x.py", "from acp_protocol import errors\n", "never sees wire types"),
        (
            "acp_server/acp/x.py",
            "from acp_server.agent.loop import AgentLoop\n",
            "acp imports agent only from acp_server.agent",
        ),
        ("acp_server/server.py", "import acp_server.config\n", "read by the CLI alone"),
        ("acp_fixture/x.py", "from acp_server.config import Config\n", "read by the CLI"),
        ("acp_server/firstrun/x.py", "from acp_server.config import Config\n", "read by the CLI"),
        ("acp_server/models/x.py", "from acp_server.tools import budget\n", "never import tools"),
    ],
)
def test_the_checker_reports_an_upward_import(
    tmp_path: Path, relative: str, source: str, reason: str
) -> None:
    write(tmp_path, relative, source)
    found = violations(tmp_path)
    assert len(found) == 1 and reason in found[0], found


def test_the_checker_accepts_downward_imports_and_finds_cycles(tmp_path: Path) -> None:
    write(tmp_path, "acp_server/acp/x.py", "from acp_server.agent import Agent\n")
    write(tmp_path, "acp_server/tools/x.py", "from acp_server.models import base\n")
    write(tmp_path, "acp_server/cli.py", "from acp_server.config import Config\n")
    write(tmp_path, "acp_server/config.py", "from acp_server.tools import x\n")
    write(tmp_path, "acp_server/firstrun/x.py", "from acp_server.firstrun import config_access\n")
    write(tmp_path, "acp_server/session/x.py", "from acp_server.process import y\n")
    write(tmp_path, "acp_server/process/y.py", "from ..session import x\n")
    assert violations(tmp_path) == []
    assert package_cycles(tmp_path) == [["process", "session", "process"]]


def test_the_checker_finds_a_type_only_cycle_between_modules(tmp_path: Path) -> None:
    write(tmp_path, "acp_server/rpc/a.py", "from .b import B\n")
    write(
        tmp_path,
        "acp_server/rpc/b.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n",
    )
    write(tmp_path, "acp_server/rpc/c.py", "from .a import A\n")
    assert module_cycles(tmp_path) == [["acp_server.rpc.a", "acp_server.rpc.b", "acp_server.rpc.a"]]


# -- One error exit (issue 25): every error the client sees is built by rpc/error_exit.py's
# redacting `error_frame`, asked only by the router and by the peer for the lines it answers
# itself. One run path (issue 36): the agent's router runs every request; jsonrpcserver
# dispatches only the agent's requests to the fixture client (acp_fixture/client_methods.py)
# and is the reference the tests check the router's answers against.

EXIT_RULES: tuple[tuple[str, str | None, frozenset[str], str], ...] = (
    (
        "jsonrpcserver",
        None,
        frozenset({"acp_fixture/client_methods.py"}),
        "only the fixture client dispatches with it; the agent's router runs every request",
    ),
    ("oslash", None, frozenset(), "jsonrpcserver's own dependency, never ours"),
    (
        "acp_protocol.jsonrpc",
        "ErrorResponse",
        frozenset({"acp_server/rpc/error_exit.py"}),
        "only the error exit builds error frames",
    ),
    (
        "acp_server.rpc.error_exit",
        "error_frame",
        frozenset({"acp_server/rpc/dispatch.py", "acp_server/rpc/peer.py"}),
        "only the router and the peer answer errors",
    ),
)
"""(module, name or None for the module itself, the files that may import it, why)."""


def named_imports(root: Path) -> Iterator[tuple[str, str, str | None, int]]:
    """(file, module, imported name or None, line) of every import under the packages and
    scripts/, relative imports resolved."""
    for package in (*PACKAGES, "scripts"):
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
                here = parts
            else:
                here = parts[:-1]
            file = str(path.relative_to(root))
            for node in ast.walk(ast.parse(path.read_text(), file)):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        yield file, alias.name, None, node.lineno
                elif isinstance(node, ast.ImportFrom):
                    module = node.module or ""
                    if node.level:
                        base = here[: len(here) - node.level + 1]
                        module = ".".join([*base, module] if module else base)
                    for alias in node.names:
                        yield file, module, alias.name, node.lineno


def exit_violations(root: Path) -> list[str]:
    found: list[str] = []
    for file, module, name, line in named_imports(root):
        for target, wanted, allowed, why in EXIT_RULES:
            if wanted is None:
                hit = module == target or module.startswith(f"{target}.")
            else:
                hit = module == target and name == wanted
            if hit and file not in allowed:
                what = target if wanted is None else f"{target}.{wanted}"
                found.append(f"{file}:{line}: imports {what}: {why}")
    return found


def test_one_error_exit() -> None:
    assert exit_violations(REPO) == []


@pytest.mark.parametrize(
    ("relative", "source", "reason"),
    [
        ("acp_server/acp/x.py", "def f():\n    import jsonrpcserver\n", "only the fixture client"),
        ("acp_server/rpc/x.py", "from jsonrpcserver.result import Error\n", "only the fixture"),
        (
            "acp_server/acp/x.py",
            "from acp_protocol.jsonrpc import ErrorResponse\n",
            "only the error exit builds",
        ),
        (
            "acp_server/rpc/x.py",
            "from .error_exit import error_frame\n",
            "only the router and the peer",
        ),
    ],
)
def test_the_exit_checker_reports_a_second_exit(
    tmp_path: Path, relative: str, source: str, reason: str
) -> None:
    write(tmp_path, "acp_server/rpc/error_exit.py", "")
    write(tmp_path, "acp_server/rpc/dispatch.py", "from .error_exit import error_frame\n")
    write(tmp_path, relative, source)
    found = exit_violations(tmp_path)
    assert len(found) == 1 and reason in found[0], found


# --- records are built by the recorder alone (issue 25: the session package owns its vocabulary;
# issue 36: one builder per kind, so a journaled field is filled in one place) ---

RECORDS_MODULE = Path("acp_server/session/records.py")
RECORD_OWNER = Path("acp_server/session/recorder.py")


def record_types(root: Path) -> frozenset[str]:
    """The members of the `Record` union, read from records.py, plus the journal header: the
    durable things whose construction (and time stamp) belongs to the session package."""
    tree = ast.parse((root / RECORDS_MODULE).read_text())
    for node in tree.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "Record"
            and node.value is not None
        ):
            names = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            return frozenset({*names, "JournalHeader"})
    raise AssertionError(f"no `Record` union in {RECORDS_MODULE}")


RECORD_SOURCES = frozenset(
    {
        "acp_server.session.records",
        "acp_server.session.journal",
        "acp_server.session.journal_format",
    }
)
"""The modules a record type or the journal header can be imported from."""


def _record_bindings(
    tree: ast.Module, here: list[str], types: frozenset[str]
) -> tuple[dict[str, str], set[str]]:
    """The local names bound to a record type (local -> type), and those bound to a module
    that defines them (`rec` in `from acp_server.session import records as rec`)."""
    names: dict[str, str] = {}
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name in RECORD_SOURCES)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join([*here[: len(here) - node.level + 1], *[node.module or ""]])
            else:
                base = node.module or ""
            base = base.rstrip(".")
            for alias in node.names:
                local = alias.asname or alias.name
                if f"{base}.{alias.name}" in RECORD_SOURCES:
                    modules.add(local)
                elif base in RECORD_SOURCES and alias.name in types:
                    names[local] = alias.name
    return names, modules


def record_constructions(root: Path) -> list[str]:
    """Every call of a record type in `acp_server` outside the recorder, as
    `file:line: why`. Names are resolved through the module's imports, so a same-named type
    of another package (the models' `UserMessage`) is not one."""
    types = record_types(root)
    found: list[str] = []
    for path in sorted((root / "acp_server").rglob("*.py")):
        relative = path.relative_to(root)
        if relative.is_relative_to(RECORD_OWNER):
            continue
        tree = ast.parse(path.read_text(), str(path))
        package = list(relative.parent.parts)  # what a relative import counts from
        names, modules = _record_bindings(tree, package, types)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            built = None
            if isinstance(func, ast.Name):
                built = names.get(func.id)
            elif isinstance(func, ast.Attribute) and func.attr in types:
                owner = ast.unparse(func.value)
                if owner in modules or owner in RECORD_SOURCES:
                    built = func.attr
            if built is not None:
                found.append(
                    f"{relative}:{node.lineno}: builds a {built}; ask "
                    "acp_server.session.recorder instead"
                )
    return found


def test_records_are_built_by_the_recorder_alone() -> None:
    assert len(record_types(REPO)) >= 14
    assert record_constructions(REPO) == []


@pytest.mark.parametrize(
    "source",
    [
        "from acp_server.session import records as rec\nrec.TurnStart(turn_id='t', at='')\n",
        "from acp_server.session.records import ModeChange\nModeChange(mode='x', at='')\n",
        "from acp_server.session.records import ModeChange as M\nM(mode='x', at='')\n",
        "from acp_server.session.journal import JournalHeader\nJournalHeader(session_id='s')\n",
        "from ..session import records\nrecords.StepEnd(turn_id='t', step=1, finish='', at='')\n",
        "import acp_server.session.records\n"
        "acp_server.session.records.TurnStart(turn_id='t', at='')\n",
    ],
)
def test_the_checker_reports_a_record_built_outside_the_recorder(
    tmp_path: Path, source: str
) -> None:
    (tmp_path / RECORDS_MODULE).parent.mkdir(parents=True)
    (tmp_path / RECORDS_MODULE).write_text((REPO / RECORDS_MODULE).read_text())
    write(tmp_path, "acp_server/session/recorder.py", source)  # the owner may
    assert record_constructions(tmp_path) == []
    write(tmp_path, "acp_server/agent/x.py", source)
    write(tmp_path, "acp_server/session/x.py", source)  # the rest of the session package too
    found = record_constructions(tmp_path)
    assert len(found) == 2, found
    assert "acp_server/agent/x.py:2: builds a" in found[0]
    assert "acp_server/session/x.py:2: builds a" in found[1]


def test_a_same_named_type_of_another_package_is_not_a_record(tmp_path: Path) -> None:
    (tmp_path / RECORDS_MODULE).parent.mkdir(parents=True)
    (tmp_path / RECORDS_MODULE).write_text((REPO / RECORDS_MODULE).read_text())
    write(
        tmp_path,
        "acp_server/agent/x.py",
        "from acp_server.models.base import UserMessage\nfrom acp_server.session import records\n"
        "UserMessage(parts=[])\nrecords.TextPart(text='')\n",
    )
    assert record_constructions(tmp_path) == []


# -- Tests mirror the code (issue 25 item 6): a unit test directory tests/X imports only
# acp_server.X and what sits below it, so a failure there points at X. Runs of the whole agent
# live in tests/e2e and may import anything; so may the scaffolding they share (tests/support)
# and the tests of what is outside the packages (scripts, the image, the benchmarks). What a
# test imports through tests/support is not followed: the rule reads the test's own imports.

TEST_DIR_UNITS = {"protocol": "acp_protocol"}
"""A test directory named otherwise than the unit it mirrors."""
FREE_TEST_DIRS = frozenset({"e2e", "support", "data", "scripts", "docker", "benchmarks"})
IMPORTABLE_BY_TESTS = frozenset({"config"})
"""Units any test may import: the config file's reader sits at the top (only the CLI imports
it among the packages), and a test builds the settings it needs from TOML text through it."""


def upward_test_imports(root: Path) -> list[str]:
    """Every import of a unit above the one its test directory mirrors, as `file:line: why`."""
    found: list[str] = []
    for directory in sorted(p for p in (root / "tests").iterdir() if p.is_dir()):
        if directory.name in FREE_TEST_DIRS or directory.name.startswith((".", "_")):
            continue
        unit = TEST_DIR_UNITS.get(directory.name, directory.name)
        if not any(unit in layer for layer in LAYERS):
            found.append(f"tests/{directory.name}: mirrors no unit of the layer map")
            continue
        for path in sorted(directory.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    targets = [node.module]
                else:
                    continue
                for target in targets:
                    if target.split(".")[0] not in PACKAGES:
                        continue
                    dest = unit_of(target)
                    if dest != unit and dest not in IMPORTABLE_BY_TESTS and rank(dest) > rank(unit):
                        where = f"{path.relative_to(root)}:{node.lineno}"
                        found.append(f"{where}: tests of {unit} import {target} ({dest} is above)")
    return found


def test_unit_tests_import_only_their_unit_and_below() -> None:
    assert upward_test_imports(REPO) == []


def test_the_test_dir_checker_reports_an_upward_import(tmp_path: Path) -> None:
    write(tmp_path, "tests/tools/test_x.py", "from acp_server.agent.seams import Seams\n")
    write(tmp_path, "tests/agent/test_y.py", "from acp_server.tools import base\n")
    write(tmp_path, "tests/protocol/test_z.py", "import acp_protocol.jsonrpc\n")
    write(tmp_path, "tests/e2e/test_w.py", "from acp_server.acp import connection\n")
    write(tmp_path, "tests/nowhere/test_v.py", "x = 1\n")
    assert upward_test_imports(tmp_path) == [
        "tests/nowhere: mirrors no unit of the layer map",
        "tests/tools/test_x.py:1: tests of tools import acp_server.agent.seams (agent is above)",
    ]


# -- A session's tools have one owner (issue 36): the bridge sees `tools/` through three
# modules (what a tool is, who may do what, and the toolbox that owns a session's tools), and
# the built-in tools are made in one place, so adding one touches its module, the registry and
# its test (docs/architecture.md, "Where a change goes").

BRIDGE_SEES_OF_TOOLS = frozenset(
    {"acp_server.tools.toolbox", "acp_server.tools.base", "acp_server.tools.permissions"}
)
TOOL_MAKERS = frozenset({"acp_server/tools/builtin/__init__.py"})
"""Where a built-in tool is constructed: the registry (`builtin_tools`, `skill_tool`)."""


def bridge_tools_imports(root: Path) -> list[str]:
    """Every import of a `tools/` module by the bridge other than the three, `file:line`."""
    return [
        f"{path}:{line}: {module} imports {target}: the bridge imports only "
        + ", ".join(sorted(BRIDGE_SEES_OF_TOOLS))
        for module, target, path, line in imports(root)
        if unit_of(module) == "acp"
        and unit_of(target) == "tools"
        and target not in BRIDGE_SEES_OF_TOOLS
    ]


def tool_classes(root: Path) -> frozenset[str]:
    """The classes under `acp_server/tools` that declare a tool: a class-level `name` string
    and a `kind`."""
    found: set[str] = set()
    for path in sorted((root / "acp_server" / "tools").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            names: set[str] = set()
            for item in node.body:
                if isinstance(item, ast.Assign) and isinstance(item.value, ast.Constant):
                    names.update(t.id for t in item.targets if isinstance(t, ast.Name))
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
            if {"name", "kind"} <= names:
                found.add(node.name)
    return frozenset(found)


def tools_made_elsewhere(root: Path) -> list[str]:
    """Every construction of a built-in tool class outside the registry, `file:line`."""
    classes = tool_classes(root)
    found: list[str] = []
    for path in sorted((root / "acp_server").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative in TOOL_MAKERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(), relative)):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if called in classes:
                    found.append(
                        f"{relative}:{node.lineno}: makes a {called}; register it in "
                        "acp_server/tools/builtin/__init__.py"
                    )
    return found


def test_the_bridge_imports_three_modules_of_tools() -> None:
    assert bridge_tools_imports(REPO) == []
    seen = {target for module, target, _, _ in imports(REPO) if unit_of(module) == "acp"}
    assert {t for t in seen if unit_of(t) == "tools"} == BRIDGE_SEES_OF_TOOLS


def test_built_in_tools_are_made_in_the_registry_alone() -> None:
    assert {"ReadFile", "Bash", "WebFetch", "SkillTool", "AskUser"} <= tool_classes(REPO)
    assert tools_made_elsewhere(REPO) == []


def test_adding_a_tool_touches_the_listed_files_and_no_more() -> None:
    page = (REPO / "docs" / "architecture.md").read_text()
    section = page.split("### Add a tool\n", 1)[1].split("\n#", 1)[0]
    items = re.findall(r"^\d+\. (.*)$", section, re.MULTILINE)
    files = [re.match(r"`([^`]+)`", item) for item in items]
    assert 1 <= len(items) <= 3 and all(files), items
    named = [match.group(1) for match in files if match]
    assert set(named) >= TOOL_MAKERS
    for name in named:  # each exists, for a tool we have
        assert (REPO / name.replace("NAME", "shell")).is_file(), name


def test_the_tools_checkers_report_a_fourth_module_and_a_tool_made_elsewhere(
    tmp_path: Path,
) -> None:
    write(tmp_path, "acp_server/tools/workspace.py", "")
    write(tmp_path, "acp_server/tools/toolbox.py", "")
    write(tmp_path, "acp_server/acp/x.py", "from acp_server.tools import toolbox, workspace\n")
    assert bridge_tools_imports(tmp_path) == [
        "acp_server/acp/x.py:1: acp_server.acp.x imports acp_server.tools.workspace: the "
        "bridge imports only acp_server.tools.base, acp_server.tools.permissions, "
        "acp_server.tools.toolbox"
    ]
    write(
        tmp_path,
        "acp_server/tools/builtin/probe.py",
        'class Probe:\n    name = "probe"\n    kind = "read"\n',
    )
    write(tmp_path, "acp_server/tools/builtin/__init__.py", "Probe()\n")
    write(tmp_path, "acp_server/tools/toolbox.py", "from .builtin.probe import Probe\nProbe()\n")
    assert tools_made_elsewhere(tmp_path) == [
        "acp_server/tools/toolbox.py:2: makes a Probe; register it in "
        "acp_server/tools/builtin/__init__.py"
    ]
