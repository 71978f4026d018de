"""Fixtures of the ACP tests: the session's workspace, and an environment without the sandbox
variable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The session's workspace (its cwd), resolved: paths on the wire are absolute."""
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))


@pytest.fixture
def not_sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACP_SERVER_SANDBOXED", raising=False)
