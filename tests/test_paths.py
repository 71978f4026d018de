"""The one XDG rule (`acp_server/paths.py`) and the files that follow it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from acp_server import paths
from acp_server.agent import user_instructions_file
from acp_server.config import config_path
from acp_server.extensions.hooks import user_hooks_path


@pytest.mark.parametrize(
    ("dir_of", "variable", "fallback"),
    [
        (paths.config_dir, "XDG_CONFIG_HOME", ".config"),
        (paths.data_dir, "XDG_DATA_HOME", ".local/share"),
    ],
)
def test_xdg_variable_then_home(
    dir_of: Callable[[Mapping[str, str]], Path], variable: str, fallback: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    assert dir_of({variable: str(tmp_path / "x"), "HOME": str(home)}) == tmp_path / "x/acp-server"
    assert dir_of({"HOME": str(home)}) == home / fallback / "acp-server"
    # Empty and relative values are ignored, as the XDG Base Directory spec says.
    assert dir_of({variable: "", "HOME": str(home)}) == home / fallback / "acp-server"
    assert dir_of({variable: "rel/dir", "HOME": str(home)}) == home / fallback / "acp-server"
    assert dir_of({}) == Path.home() / fallback / "acp-server"


@pytest.mark.parametrize(
    "environ",
    [
        {"XDG_CONFIG_HOME": "/abs/config", "HOME": "/h"},
        {"XDG_CONFIG_HOME": "relative", "HOME": "/h"},
        {"XDG_CONFIG_HOME": "", "HOME": "/h"},
        {"HOME": "/h"},
    ],
)
def test_every_user_file_is_in_the_one_config_dir(environ: dict[str, str]) -> None:
    """The config file, the hooks file and the user's AGENTS.md agree on the directory (they
    did not: the hooks file honoured a relative XDG_CONFIG_HOME and ignored HOME)."""
    expected = paths.config_dir(environ)
    assert config_path(environ) == expected / "config.toml"
    assert user_hooks_path(environ) == expected / "hooks.json"
    assert user_instructions_file(environ) == expected / "AGENTS.md"
