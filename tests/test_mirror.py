"""Tests mirror the code (issue 36 item 4): every module of acp_server/, acp_protocol/ and
acp_fixture/ has a test module of its name in the mirrored folder, which tests it, or which is a
pointer: a docstring alone, naming the test files that pin the module's behaviour. The rule and
the reasons are in docs/rfc/implemented/process/2026-12-01-tests-and-tools-mirror-the-code.md.

The mirror: `acp_server/agent/loop.py` -> `tests/agent/test_loop.py`, `acp_server/cli.py` ->
`tests/test_cli.py`, `acp_protocol/v2/session.py` -> `tests/protocol/v2/test_session.py`,
`acp_fixture/runner.py` -> `tests/acp_fixture/test_runner.py` (a private module's test drops
the underscore: `_common.py` -> `test_common.py`). `__main__.py` only calls `main`
(tests/e2e/test_main.py runs it); an `__init__.py` that defines a function or a class is the
module of its package's name (`acp_server/tools/builtin/__init__.py` ->
`tests/tools/test_builtin.py`), one that only re-exports has nothing of its own to test.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RFC = "docs/rfc/implemented/process/2026-12-01-tests-and-tools-mirror-the-code.md"
# Each package and the folder of tests/ that mirrors it.
MIRRORS = {
    "acp_server": "tests",
    "acp_protocol": "tests/protocol",
    "acp_fixture": "tests/acp_fixture",
}
WHAT_TO_WRITE = f"""\
Add that file, holding either:
- the module's tests: in process where you can (tests/support/ has the runtime doubles, memory
  streams, local HTTP servers, tool workspaces); tests/e2e/ is for what needs the real process;
- or, when the module's behaviour is already pinned elsewhere (in tests/e2e/, or in the test
  module of the module that drives it), a pointer: a docstring alone that names those test
  files (`file.py` or `file.py::test_name`), e.g.
    \"\"\"Tested in tests/e2e/test_notices.py (what a client is told, and when).\"\"\"
  This gate checks that every file a pointer names exists and holds tests.
The rule: {RFC}"""

# A test module a pointer names: `tests/e2e/test_notices.py`, optionally `::test_name`
# (other paths it mentions, `tests/support/bridge.py` say, are prose).
REFERENCE = re.compile(r"\btests/(?:\w+/)*test_\w+\.py(?:::\w+)?")


def defines_code(source: str) -> bool:
    """Whether a module defines a function or a class (an `__init__.py` that does has code of its
    own; one that only imports and lists `__all__` has none)."""
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        for node in ast.parse(source).body
    )


def mirrored_test(root: Path, module: Path) -> Path | None:
    """The test module (relative to `root`) that `module` (relative to `root`) needs, or None
    for a `__main__.py` and an `__init__.py` without code of its own."""
    package, *inner = module.parts
    folder = Path(MIRRORS[package], *inner[:-1])
    if module.name == "__main__.py":
        return None
    if module.name == "__init__.py":
        if not inner[:-1] or not defines_code((root / module).read_text()):
            return None
        return folder.parent / f"test_{folder.name}.py"
    return folder / f"test_{module.stem.removeprefix('_')}.py"


def modules_and_tests(root: Path) -> dict[Path, Path]:
    """Every module of the mirrored packages that needs a test module, with the one it needs."""
    needed = {}
    for package in MIRRORS:
        for path in sorted((root / package).rglob("*.py")):
            module = path.relative_to(root)
            test = mirrored_test(root, module)
            if test is not None:
                needed[module] = test
    return needed


def has_tests(tree: ast.Module) -> bool:
    """Whether a test module defines a test function or a test class pytest would collect."""
    return any(
        (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"))
        or (isinstance(node, ast.ClassDef) and node.name.startswith("Test"))
        for node in tree.body
    )


def missing_test_modules(root: Path) -> list[str]:
    """`module -> the test module to add` for every module without a test module of its name."""
    return [
        f"  {module}  ->  add {test}"
        for module, test in sorted(modules_and_tests(root).items())
        if not (root / test).is_file()
    ]


def pointer_problems(root: Path) -> list[str]:
    """What is wrong with the test modules that hold no test: each must be a pointer (its
    docstring alone), name only test files that exist and hold tests (and tests that exist in
    them, for `file::name`), and stand for a module that exists."""
    mirrored = set(modules_and_tests(root).values())
    found = []
    for path in sorted((root / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        if has_tests(tree):
            continue
        where = path.relative_to(root)
        doc = ast.get_docstring(tree) or ""
        statements = [node for node in tree.body if not is_docstring(node)]
        references = REFERENCE.findall(doc)
        if statements or not references:
            found.append(
                f"  {where}: holds no test, so it must be a pointer: nothing but a docstring that"
                " names the test files pinning its module, e.g."
                ' """Tested in tests/e2e/test_notices.py (what a client is told)."""'
            )
            continue
        if where not in mirrored:
            found.append(
                f"  {where}: a pointer for a module that no longer exists: delete it, or move it"
                " with its module"
            )
        found.extend(f"  {where}: {problem}" for problem in reference_problems(root, references))
    return found


def is_docstring(node: ast.stmt) -> bool:
    """Whether a statement is a bare constant: a docstring, the one thing a pointer holds."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def reference_problems(root: Path, references: list[str]) -> list[str]:
    """Why each named test file (or `file::test`) does not show where the behaviour is tested."""
    found = []
    for reference in references:
        file, _, name = reference.partition("::")
        path = root / file
        if not path.is_file():
            found.append(
                f"names {file}, which does not exist (moved or renamed? name its new place)"
            )
            continue
        tree = ast.parse(path.read_text())
        if not has_tests(tree):
            found.append(f"names {file}, which holds no test itself: name the file it points to")
        elif name and name not in {getattr(node, "name", None) for node in tree.body}:
            found.append(f"names {reference}, but {file} defines no {name}")
    return found


def test_every_module_has_a_test_module_of_its_name() -> None:
    missing = missing_test_modules(REPO)
    if missing:
        count = f"{len(missing)} module(s) have" if len(missing) > 1 else "1 module has"
        pytest.fail(
            f"{count} no test module of its name in the mirrored folder:\n"
            + "\n".join(missing)
            + "\n"
            + WHAT_TO_WRITE,
            pytrace=False,
        )


def test_pointers_name_test_files_that_exist() -> None:
    problems = pointer_problems(REPO)
    if problems:
        pytest.fail("test modules that point nowhere:\n" + "\n".join(problems), pytrace=False)


def imports_of_test_modules(root: Path) -> list[str]:
    """`file:line: imports module` for every import of a test module by another module under
    tests/ (what tests share lives in tests/support/)."""
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                if target.startswith("tests.") and target.rsplit(".", 1)[-1].startswith("test_"):
                    found.append(f"  {path.relative_to(root)}:{node.lineno}: imports {target}")
    return found


def test_no_test_module_imports_another() -> None:
    imports = imports_of_test_modules(REPO)
    if imports:
        pytest.fail(
            "test modules import other test modules; move what they share to tests/support/:\n"
            + "\n".join(imports),
            pytrace=False,
        )


def write(path: Path, text: str) -> None:
    """Create `path` (and its folders) holding `text`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_gate_names_each_missing_test_module_and_skips_what_has_none_of_its_own(
    tmp_path: Path,
) -> None:
    write(tmp_path / "acp_server/agent/loop.py", "X = 1\n")
    write(tmp_path / "acp_server/agent/__init__.py", "from .loop import X\n")
    write(tmp_path / "acp_server/tools/builtin/__init__.py", "def tools() -> None: ...\n")
    write(tmp_path / "acp_server/__main__.py", "main()\n")
    write(tmp_path / "acp_server/cli.py", "X = 1\n")
    write(tmp_path / "acp_protocol/v2/session.py", "X = 1\n")
    write(tmp_path / "acp_fixture/runner.py", "X = 1\n")
    write(tmp_path / "tests/test_cli.py", "def test_x() -> None:\n    assert True\n")

    assert missing_test_modules(tmp_path) == [
        "  acp_fixture/runner.py  ->  add tests/acp_fixture/test_runner.py",
        "  acp_protocol/v2/session.py  ->  add tests/protocol/v2/test_session.py",
        "  acp_server/agent/loop.py  ->  add tests/agent/test_loop.py",
        "  acp_server/tools/builtin/__init__.py  ->  add tests/tools/test_builtin.py",
    ]


def test_a_pointer_must_name_test_files_that_exist_and_hold_tests(tmp_path: Path) -> None:
    for name in ("notices", "plans", "errors", "stale", "half", "deep", "good"):
        write(tmp_path / f"acp_server/acp/{name}.py", "X = 1\n")
    (tmp_path / "acp_server/acp/stale.py").unlink()
    write(tmp_path / "tests/e2e/test_real.py", "def test_real() -> None:\n    assert True\n")
    write(tmp_path / "tests/acp/test_notices.py", '"""Tested in tests/e2e/test_gone.py."""\n')
    write(tmp_path / "tests/acp/test_plans.py", '"""Tested in tests/acp/test_notices.py."""\n')
    write(tmp_path / "tests/acp/test_errors.py", '"""Tested somewhere."""\n')
    write(tmp_path / "tests/acp/test_stale.py", '"""Tested in tests/e2e/test_real.py."""\n')
    write(tmp_path / "tests/acp/test_half.py", '"""Tested in tests/e2e/test_real.py."""\nX = 1\n')
    write(tmp_path / "tests/acp/test_deep.py", '"""In tests/e2e/test_real.py::test_gone."""\n')
    write(tmp_path / "tests/acp/test_good.py", '"""In tests/e2e/test_real.py::test_real."""\n')

    problems = "\n".join(pointer_problems(tmp_path))

    assert "test_deep.py: names tests/e2e/test_real.py::test_gone, but" in problems
    assert "test_errors.py: holds no test, so it must be a pointer" in problems
    assert "test_half.py: holds no test, so it must be a pointer" in problems
    assert "test_notices.py: names tests/e2e/test_gone.py, which does not exist" in problems
    assert "test_plans.py: names tests/acp/test_notices.py, which holds no test" in problems
    assert "test_stale.py: a pointer for a module that no longer exists" in problems
    assert "test_good.py" not in problems


def test_the_import_checker_names_a_test_module_importing_another(tmp_path: Path) -> None:
    write(tmp_path / "tests/e2e/test_a.py", "from tests.e2e.test_b import helper\n")
    write(tmp_path / "tests/e2e/test_c.py", "import tests.support.agent_process\n")
    write(tmp_path / "tests/support/x.py", "import tests.agent.test_loop\n")
    assert imports_of_test_modules(tmp_path) == [
        "  tests/e2e/test_a.py:1: imports tests.e2e.test_b",
        "  tests/support/x.py:1: imports tests.agent.test_loop",
    ]
