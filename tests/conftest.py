import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.processes import subreaper


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (the README's command): one pytest-xdist worker more than this process may use
    CPUs. The suite waits on the processes it starts (agents, shells, servers) for part of its
    time, which a third worker on two CPUs fills: on the quiet 2-CPU machine the whole suite
    took 235 s with three against 267 s with two (the suite-in-minutes RFC).
    PYTEST_XDIST_AUTO_NUM_WORKERS still wins (xdist's own reading of it follows)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    if hasattr(os, "sched_getaffinity"):  # Linux: the CPUs this process may run on
        return len(os.sched_getaffinity(0)) + 1
    return (os.cpu_count() or 1) + 1


@pytest.fixture
def anyio_backend() -> str:
    """Production runs on asyncio (`anyio.run`'s default); so do the tests."""
    return "asyncio"


@contextmanager
def environment_for_the_run(changes: dict[str, str | None]) -> Iterator[None]:
    """Set (a string) or remove (None) variables of this process's environment, which every
    process a test starts inherits; restore them afterwards."""
    previous = {name: os.environ.get(name) for name in changes}
    for name, value in changes.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(autouse=True, scope="session")
def private_xdg_homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every server the tests start journals into a throwaway directory and reads no config
    file or hooks file of the person running the tests."""
    homes: dict[str, str | None] = {
        "XDG_DATA_HOME": str(tmp_path_factory.mktemp("xdg-data")),
        "XDG_CONFIG_HOME": str(tmp_path_factory.mktemp("xdg-config")),
    }
    with environment_for_the_run(homes):
        yield


@pytest.fixture(autouse=True, scope="session")
def bytecode_caches_for_started_processes(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """The Python processes the tests start (hundreds of agents) run from bytecode caches, as
    an installed agent does, also where the runner's environment says PYTHONDONTWRITEBYTECODE:
    the caches go to a throwaway directory of this run (PYTHONPYCACHEPREFIX), not beside the
    sources. Without them every agent compiles its modules again, which doubled its start-up
    CPU (docs/rfc/implemented/testing/2026-12-06-suite-in-minutes.md)."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        yield  # bytecode is written beside the sources as usual
        return
    prefix = str(tmp_path_factory.mktemp("pycache"))
    with environment_for_the_run({"PYTHONDONTWRITEBYTECODE": None, "PYTHONPYCACHEPREFIX": prefix}):
        yield


@pytest.fixture(scope="module")
def module_subreaper() -> Iterator[None]:
    """This test process as a child subreaper for one module (`usefixtures`), as the server is."""
    with subreaper():
        yield


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The session's workspace (its cwd), resolved: paths on the wire are absolute."""
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))


@pytest.fixture
def not_sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment without the sandbox variable."""
    monkeypatch.delenv("ACP_SERVER_SANDBOXED", raising=False)
