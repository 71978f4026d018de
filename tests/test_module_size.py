"""No module over 400 lines without a one-line reason in its docstring (STYLE.md, issue 16)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("acp_protocol", "acp_server", "acp_fixture")
LIMIT = 400
REASON = "Over 400 lines: "


def long_modules_without_reason(root: Path) -> list[str]:
    """`path (N lines)` of every module over the limit whose docstring gives no reason."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            source = path.read_text()
            lines = source.count("\n")
            if lines <= LIMIT:
                continue
            doc = ast.get_docstring(ast.parse(source)) or ""
            if not any(
                line.startswith(REASON) and line[len(REASON) :] for line in doc.splitlines()
            ):
                found.append(f"{path.relative_to(root)} ({lines} lines)")
    return found


def test_every_long_module_says_why() -> None:
    assert long_modules_without_reason(REPO) == []


def test_a_long_module_without_a_reason_is_reported(tmp_path: Path) -> None:
    body = "x = 1\n" * LIMIT
    (tmp_path / "acp_server").mkdir()
    (tmp_path / "acp_server" / "long.py").write_text(f'"""A module."""\n{body}')
    (tmp_path / "acp_server" / "ok.py").write_text(
        f'"""A module.\n\n{REASON}it is one table.\n"""\n{body}'
    )
    (tmp_path / "acp_server" / "short.py").write_text(body[: 6 * LIMIT // 2])
    assert long_modules_without_reason(tmp_path) == ["acp_server/long.py (401 lines)"]
