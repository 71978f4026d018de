"""scripts/verify_doc_refs.py scans every shipped package and the examples, not a fixed list.

Paths under the docs folder that must not exist are spelled with DOCS in f-strings, so this
file passes the gate it tests.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.doc_gates import DOCS, REPO, assert_fails_with, run_gate, write


def test_a_package_the_gate_was_never_told_about_is_scanned(tmp_path: Path) -> None:
    write(tmp_path / "acp_fixture" / "__init__.py", f'"""Format: {DOCS}/gone.md."""\n')
    write(tmp_path / "newpkg" / "mod.py", f"# {DOCS}/also-gone.md\n")
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert_fails_with(
        result,
        f"acp_fixture/__init__.py:1: missing {DOCS}/gone.md",
        f"newpkg/mod.py:1: missing {DOCS}/also-gone.md",
    )


def test_example_fixtures_are_scanned_line_by_line(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "fixtures.md", "# Fixtures\n")
    fixture = f"# format: {DOCS}/fixtures.md\n{{}}\n# see {DOCS}/gone.md\n"
    write(tmp_path / "examples" / "tour" / "tour.jsonl", fixture)
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert_fails_with(result, f"examples/tour/tour.jsonl:3: missing {DOCS}/gone.md")
    assert "tour.jsonl:1" not in result.stdout


def test_hidden_directories_are_not_scanned(tmp_path: Path) -> None:
    write(tmp_path / ".venv" / "lib" / "site.py", f"# {DOCS}/gone.md\n")
    write(tmp_path / "acp_server" / "mod.py", "X = 1\n")
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert result.returncode == 0, result.stdout


def test_the_real_fixture_runner_and_examples_are_scanned(tmp_path: Path) -> None:
    # The real files, in a tree without the docs they cite: the gate must name both.
    for rel in ("acp_fixture/format.py", "examples/tour/tour.jsonl"):
        write(tmp_path / rel, (REPO / rel).read_text(encoding="utf-8"))
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert_fails_with(
        result,
        f"acp_fixture/format.py:1: missing {DOCS}/fixtures.md",
        f"examples/tour/tour.jsonl:3: missing {DOCS}/fixtures.md",
    )
