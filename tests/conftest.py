import os
from collections.abc import Iterator

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Production runs on asyncio (jsonrpcserver's async path needs it); so do the tests."""
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def private_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Session journals of every server the tests start go to a throwaway directory."""
    previous = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))
    yield
    if previous is None:
        del os.environ["XDG_DATA_HOME"]
    else:
        os.environ["XDG_DATA_HOME"] = previous
