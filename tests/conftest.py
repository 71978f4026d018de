import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Production runs on asyncio (jsonrpcserver's async path needs it); so do the tests."""
    return "asyncio"
