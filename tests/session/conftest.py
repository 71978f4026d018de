"""The `store` fixture of the journal tests: an empty journal store in the test's directory."""

from pathlib import Path

import pytest

from acp_server.session.journal import JournalStore


@pytest.fixture
def store(tmp_path: Path) -> JournalStore:
    return JournalStore(tmp_path / "data")
