"""The documentation gates in scripts/: each fails on a broken tree, naming file and line.

verify_doc_refs.py scans this file too, so a path under the docs folder that must NOT exist in the
real repository is spelled with the DOCS constant in an f-string (never as a plain literal).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.doc_gates import DOCS, SCRIPTS, assert_fails_with, run_gate, write

GATES = ("verify_rfc_classification.py", "verify_doc_refs.py", "verify_md_links.py")

SECTIONS = ("Problem", "Decision", "Alternatives considered", "Consequences", "Verification")
GOOD_A = "proposed/architecture/2026-11-30-turn-holder.md"
GOOD_B = "rejected/simplification/2026-11-29-step-abort.md"


def rfc_text(
    lifecycle: str, *, title: str = "# RFC: A title", sections: tuple[str, ...] = SECTIONS
) -> str:
    body = "".join(f"## {name}\n\nText.\n\n" for name in sections)
    return f"{title}\n\nStatus: {lifecycle}\n\n{body}"


def write_rfc(root: Path, rel: str, text: str | None = None) -> Path:
    return write(root / "docs" / "rfc" / rel, rfc_text(rel.split("/")[0]) if text is None else text)


def index_text(entries: dict[tuple[str, str], list[str]]) -> str:
    lines = ["# RFCs", "", "## Classification", "", "Prose with [a link](#proposed).", ""]
    for lifecycle in ("proposed", "implemented", "rejected"):
        lines += [f"## {lifecycle.capitalize()}", ""]
        for (entry_lifecycle, klass), targets in entries.items():
            if entry_lifecycle == lifecycle:
                lines += [f"### {klass}", ""] + [f"- [Title]({t})" for t in targets] + [""]
    return "\n".join(lines) + "\n"


def write_index(root: Path, entries: dict[tuple[str, str], list[str]]) -> Path:
    return write(root / "docs" / "rfc" / "README.md", index_text(entries))


GOOD_INDEX = {("proposed", "architecture"): [GOOD_A], ("rejected", "simplification"): [GOOD_B]}


@pytest.fixture
def rfc_tree(tmp_path: Path) -> Path:
    write_rfc(tmp_path, GOOD_A)
    write_rfc(tmp_path, GOOD_B)
    write_index(tmp_path, GOOD_INDEX)
    return tmp_path


@pytest.mark.parametrize("gate", GATES)
def test_gate_passes_on_the_real_repository(gate: str) -> None:
    assert os.access(SCRIPTS / gate, os.X_OK), f"scripts/{gate} is not executable"
    result = run_gate(gate)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("OK:")


def test_rfc_gate_passes_on_a_good_tree(rfc_tree: Path) -> None:
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert result.returncode == 0, result.stdout
    assert "OK: 2 RFCs" in result.stdout


@pytest.mark.parametrize(
    ("rel", "message"),
    [
        ("draft/architecture/2026-11-30-x.md", "unknown lifecycle folder 'draft'"),
        ("proposed/architectures/2026-11-30-x.md", "unknown class folder 'architectures'"),
        ("proposed/2026-11-30-x.md", "an RFC lives at"),
        ("proposed/feature/new-idea.md", "file name must be yyyy-mm-dd-topic.md"),
        ("proposed/feature/2026-11-30-New_Idea.md", "file name must be yyyy-mm-dd-topic.md"),
        ("proposed/feature/2026-13-01-idea.md", "file name starts with an invalid date"),
    ],
)
def test_rfc_gate_rejects_a_misfiled_rfc(rfc_tree: Path, rel: str, message: str) -> None:
    write_rfc(rfc_tree, rel, rfc_text("proposed"))
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(result, f"docs/rfc/{rel}:1: {message}")


def test_rfc_gate_requires_the_title_line(rfc_tree: Path) -> None:
    write_rfc(rfc_tree, GOOD_A, rfc_text("proposed", title="# A title without the prefix"))
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(result, f"docs/rfc/{GOOD_A}:1: first line must be the title")


def test_rfc_gate_rejects_a_status_that_contradicts_the_folder(rfc_tree: Path) -> None:
    write_rfc(rfc_tree, GOOD_A, rfc_text("implemented"))
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(
        result, f"docs/rfc/{GOOD_A}:3: Status 'implemented' does not match its folder 'proposed'"
    )


def test_rfc_gate_requires_every_section(rfc_tree: Path) -> None:
    write_rfc(rfc_tree, GOOD_A, rfc_text("proposed", sections=SECTIONS[:-1]))
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(result, f"docs/rfc/{GOOD_A}:1: missing section '## Verification'")


def test_rfc_gate_accepts_proposal_for_decision(rfc_tree: Path) -> None:
    sections = ("Problem", "Proposal", *SECTIONS[2:])
    write_rfc(rfc_tree, GOOD_A, rfc_text("proposed", sections=sections))
    assert run_gate("verify_rfc_classification.py", rfc_tree).returncode == 0


def test_rfc_gate_ignores_headings_inside_code_fences(rfc_tree: Path) -> None:
    fenced = "```\n## Verification\n```\n"
    write_rfc(rfc_tree, GOOD_A, rfc_text("proposed", sections=SECTIONS[:-1]) + fenced)
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(result, f"docs/rfc/{GOOD_A}:1: missing section '## Verification'")


def test_rfc_gate_reports_an_rfc_missing_from_the_index(rfc_tree: Path) -> None:
    write_index(rfc_tree, {("proposed", "architecture"): [GOOD_A]})
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(
        result,
        f"docs/rfc/{GOOD_B}:1: not listed in docs/rfc/README.md",
        "'## Rejected' / '### simplification'",
    )


def test_rfc_gate_reports_an_entry_under_the_wrong_heading(rfc_tree: Path) -> None:
    index = write_index(
        rfc_tree,
        {("proposed", "architecture"): [GOOD_A], ("implemented", "simplification"): [GOOD_B]},
    )
    line = index.read_text().splitlines().index(f"- [Title]({GOOD_B})") + 1
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(
        result,
        f"docs/rfc/README.md:{line}: {GOOD_B} is listed under '## Implemented' / "
        "'### simplification' but is not in that folder",
    )
    assert "not listed" not in result.stdout


def test_rfc_gate_reports_a_dangling_index_link(rfc_tree: Path) -> None:
    gone = "proposed/architecture/2026-11-30-gone.md"
    index = write_index(rfc_tree, {**GOOD_INDEX, ("proposed", "architecture"): [GOOD_A, gone]})
    line = index.read_text().splitlines().index(f"- [Title]({gone})") + 1
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(result, f"docs/rfc/README.md:{line}: dangling index link {gone}")


def test_rfc_gate_reports_an_rfc_listed_twice(rfc_tree: Path) -> None:
    write_index(rfc_tree, {**GOOD_INDEX, ("proposed", "architecture"): [GOOD_A, GOOD_A]})
    result = run_gate("verify_rfc_classification.py", rfc_tree)
    assert_fails_with(result, f"{GOOD_A} is listed again")


def test_doc_refs_gate_passes_when_every_reference_exists(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "guide.md", "# Guide\n")
    write(tmp_path / "acp_server" / "mod.py", f'# see {DOCS}/guide.md\nX = "{DOCS}/guide.md"\n')
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert result.returncode == 0, result.stdout
    assert "OK: 2 docs references" in result.stdout


def test_doc_refs_gate_reports_a_missing_reference_in_a_comment(tmp_path: Path) -> None:
    write(tmp_path / "acp_protocol" / "types.py", f"X = 1\n\n# see {DOCS}/gone.md for why\n")
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert_fails_with(result, f"acp_protocol/types.py:3: missing {DOCS}/gone.md")


def test_doc_refs_gate_reports_a_missing_reference_in_a_string(tmp_path: Path) -> None:
    source = f'def f():\n    """Summary.\n\n    Details in {DOCS}/rfc/gone.md.\n    """\n'
    write(tmp_path / "tests" / "test_x.py", source)
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert_fails_with(result, f"tests/test_x.py:4: missing {DOCS}/rfc/gone.md")


def test_doc_refs_gate_ignores_code_and_fixture_data(tmp_path: Path) -> None:
    broken = f"# {DOCS}/gone.md\n"
    write(tmp_path / "tests" / "agent" / "fixtures" / "case.py", broken)
    write(tmp_path / "tests" / "data" / "case.py", broken)
    write(tmp_path / "acp_server" / "notes.txt", broken)
    # Valid Python that reads like a path: division and attribute access, not a citation.
    write(tmp_path / "acp_server" / "mod.py", f"x = {DOCS}/gone.md\n")
    assert run_gate("verify_doc_refs.py", tmp_path).returncode == 0


def test_doc_refs_gate_reads_python_scripts_without_extension(tmp_path: Path) -> None:
    write(tmp_path / "scripts" / "tool", f"#!/usr/bin/env python3\n# {DOCS}/gone.md\n")
    write(tmp_path / "scripts" / "shell-tool", f"#!/bin/sh\n# {DOCS}/also-gone.md\n")
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert_fails_with(result, f"scripts/tool:2: missing {DOCS}/gone.md")
    assert "shell-tool" not in result.stdout


def test_md_links_gate_passes_on_good_links(tmp_path: Path) -> None:
    write(tmp_path / "README.md", f"See [the guide]({DOCS}/guide.md#start).\n")
    write(
        tmp_path / "docs" / "guide.md",
        "Back to [the readme](../README.md), [web](https://example.org/x.md),\n"
        "[mail](mailto:a@example.org), [here](#start), ![img](guide.md).\n",
    )
    result = run_gate("verify_md_links.py", tmp_path)
    assert result.returncode == 0, result.stdout
    assert "OK: 3 relative links in 2 Markdown files" in result.stdout


def test_md_links_gate_reports_a_broken_link(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "guide.md", "# Guide\n\nSee [other](other.md#part).\n")
    result = run_gate("verify_md_links.py", tmp_path)
    assert_fails_with(result, f"{DOCS}/guide.md:3: broken link other.md#part")


def test_md_links_gate_reports_a_link_leaving_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(tmp_path / "outside.md", "# Outside\n")
    write(repo / "README.md", "See [outside](../outside.md).\n")
    result = run_gate("verify_md_links.py", repo)
    assert_fails_with(result, "README.md:1: broken link ../outside.md (outside the repository)")


def test_md_links_gate_ignores_links_in_code(tmp_path: Path) -> None:
    text = (
        "# Guide\n"
        "```markdown\n"
        "[fenced](missing-one.md)\n"
        "```\n"
        "Inline `[code](missing-two.md)` is an example.\n"
        "~~~~\n"
        "[tilde](missing-three.md)\n"
        "~~~~\n"
        "After the fences: [real](missing-four.md)\n"
    )
    write(tmp_path / "docs" / "guide.md", text)
    result = run_gate("verify_md_links.py", tmp_path)
    assert_fails_with(result, f"{DOCS}/guide.md:9: broken link missing-four.md")
    assert "missing-one" not in result.stdout
    assert "missing-two" not in result.stdout
    assert "missing-three" not in result.stdout


def test_doc_refs_gate_reads_markdown_prose_but_not_its_fences(tmp_path: Path) -> None:
    text = (
        f"See `{DOCS}/gone.md` for why.\n"
        "```sh\n"
        f"cat {DOCS}/example-only.md\n"
        "```\n"
        f"And {DOCS}/here.md.\n"
    )
    write(tmp_path / "README.md", text)
    write(tmp_path / "docs" / "here.md", "# Here\n")
    result = run_gate("verify_doc_refs.py", tmp_path)
    assert_fails_with(result, f"README.md:1: missing {DOCS}/gone.md")
    assert "example-only" not in result.stdout


def test_the_gates_share_one_fence_parser() -> None:
    """One reader of fenced code, with CommonMark's closing rule: the same character, at least
    as long, alone on its line; an unclosed fence runs to the end."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        from markdown_fences import outside_fences
    finally:
        sys.path.remove(str(SCRIPTS))
    text = "a\n````\nb\n```\n~~~~\nc\n````\nd\n~~~\ne\n"
    assert list(outside_fences(text)) == [(1, "a"), (8, "d")]
    for gate in GATES:
        source = (SCRIPTS / gate).read_text()
        assert "from markdown_fences import" in source, gate
        assert "FENCE_OPEN" not in source, gate
