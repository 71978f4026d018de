"""Running the documentation gates of scripts/ on made-up trees: the gate as a program, its failure
with what it names, and files written for it. A path under the docs folder that must not exist in
the real repository is spelled with DOCS in an f-string (verify_doc_refs.py scans tests/ too)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


SCRIPTS = REPO / "scripts"


DOCS = "docs"


def run_gate(gate: str, root: Path | None = None) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, str(SCRIPTS / gate)]
    if root is not None:
        args += ["--root", str(root)]
    return subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=30, check=False)


def assert_fails_with(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert all(fragment in result.stdout for fragment in fragments), result.stdout


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
