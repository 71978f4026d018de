"""The `ws` fixture of the tool tests: a fresh workspace with the built-in tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tool_workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)
