"""The version: `acp-server --version` prints the pyproject version."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from tests.support.agent_process import SERVER

REPO = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def test_version_prints_the_pyproject_version() -> None:
    done = subprocess.run(
        [SERVER, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0
    assert done.stdout == f"acp-server {VERSION}\n"
