"""Both anyio backends, for the suites of the runtime's cancellation core.

The runtime is anyio: running its agent, cancellation, process and hook suites on asyncio and
on trio keeps the code from leaning on asyncio-only behaviour by accident. The wire tests stay
on asyncio, as production does (see tests/conftest.py). A module opts in by
importing `anyio_backend` from here; tests/agent/conftest.py does it for that whole folder.
"""

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend
