import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import subreaper


@pytest.fixture
def anyio_backend() -> str:
    """Production runs on asyncio (`anyio.run`'s default); so do the tests."""
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def private_xdg_homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every server the tests start journals into a throwaway directory and reads no config
    file or hooks file of the person running the tests."""
    homes = {
        "XDG_DATA_HOME": str(tmp_path_factory.mktemp("xdg-data")),
        "XDG_CONFIG_HOME": str(tmp_path_factory.mktemp("xdg-config")),
    }
    previous = {name: os.environ.get(name) for name in homes}
    os.environ.update(homes)
    yield
    for name, value in previous.items():
        if value is None:
            del os.environ[name]
        else:
            os.environ[name] = value


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
