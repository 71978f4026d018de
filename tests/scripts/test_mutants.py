"""The contract mutants of `scripts/mutants.py` follow the code: every snippet a mutant breaks is
found exactly once in the tracked source and every test path it runs exists. This runs the
script's `--check` logic in process; it never runs the mutants (minutes each: see
docs/benchmarks.md, "Contract mutants")."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _load_mutants() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutants_script", REPO / "scripts" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


mutants = _load_mutants()


def test_every_mutant_matches_todays_code() -> None:
    problems = mutants.stale_entries(mutants.MUTANTS, REPO, mutants.tracked_files(REPO))
    assert problems == [], "\n".join(problems)


def test_every_mutant_changes_something_and_has_its_own_name() -> None:
    names = [m.name for m in mutants.MUTANTS]
    assert len(names) == len(set(names))
    for mutant in mutants.MUTANTS:
        assert mutant.edits and mutant.tests, mutant.name
        assert all(edit.old != edit.new for edit in mutant.edits), mutant.name


def test_the_check_names_missing_duplicated_snippets_and_missing_test_paths(
    tmp_path: Path,
) -> None:
    source = tmp_path / "acp_server" / "mod.py"
    source.parent.mkdir()
    source.write_text("once()\ntwice()\ntwice()\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_here.py").write_text("", encoding="utf-8")
    # Outside the source folders: never mutated, so never counted.
    (tmp_path / "tests" / "test_other.py").write_text("gone()\n", encoding="utf-8")
    files = [Path("acp_server/mod.py"), Path("tests/test_here.py"), Path("tests/test_other.py")]
    Edit, Mutant = mutants.Edit, mutants.Mutant
    table = (
        Mutant("current", "r", (Edit("once()", "x()"),), ("tests/test_here.py", "-k", "a")),
        Mutant("at-node", "r", (Edit("once()", "x()"),), ("tests/test_here.py::test_a",)),
        Mutant("gone", "r", (Edit("gone()", "x()"),), ("tests/test_here.py",)),
        Mutant("twice", "r", (Edit("twice()", "x()"),), ("tests/test_here.py",)),
        Mutant("moved-test", "r", (Edit("once()", "x()"),), ("tests/acp/test_moved.py",)),
    )
    problems = mutants.stale_entries(table, tmp_path, files)
    assert problems == [
        "gone: snippet found 0 times: 'gone()'",
        "twice: snippet found 2 times: 'twice()'",
        "moved-test: no test path tests/acp/test_moved.py",
    ]
