"""docs/troubleshooting.md covers the first-run commands: a section for each check `doctor` makes
and each failure message the probe of `setup` and `doctor` can give, read from the code (so a new
check or message without its entry fails here)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "troubleshooting.md"
FIRSTRUN = REPO / "acp_server" / "firstrun"


def _calls(module: Path, name: str) -> list[ast.Call]:
    tree = ast.parse(module.read_text())
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
    ]


def _fixed_text(node: ast.expr) -> str | None:
    """The first literal piece of a string or f-string argument, as a reader would look it up
    (None: all computed)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.strip()
    if isinstance(node, ast.JoinedStr):
        pieces = [
            part.value.strip(" (")
            for part in node.values
            if isinstance(part, ast.Constant) and isinstance(part.value, str)
        ]
        return next((piece for piece in pieces if piece), None)
    return None


def doctor_checks() -> set[str]:
    """The name of every check `doctor` reports (the first argument of each `Check(...)`)."""
    calls = _calls(FIRSTRUN / "doctor.py", "Check")
    return {c.args[0].value for c in calls if isinstance(c.args[0], ast.Constant)}


def probe_messages() -> list[str]:
    """The literal part of every failure message of the probe."""
    found = [_fixed_text(call.args[1]) for call in _calls(FIRSTRUN / "probe.py", "ProbeFailure")]
    return [text for text in found if text]


def test_every_doctor_check_has_its_section() -> None:
    page = PAGE.read_text()
    checks = doctor_checks()
    assert checks == {"config", "model", "data dir", "mode", "sandbox", "stdout"}
    for name in checks:
        assert f"\n### {name}\n" in page, name


def test_every_failure_message_of_the_probe_is_explained() -> None:
    page = PAGE.read_text()
    messages = probe_messages()
    assert "cannot reach" in messages  # the reader finds them
    for text in messages:
        assert text in page, text


def test_the_page_is_linked_from_the_docs_index_and_the_cli_page() -> None:
    assert "(docs/troubleshooting.md)" in (REPO / "README.md").read_text()
    assert "(troubleshooting.md)" in (REPO / "docs" / "cli.md").read_text()
