"""The config file edit (tomlkit) and the atomic 0600 write of `acp-server setup`."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest

from acp_server.config import load_config
from acp_server.firstrun.configfile import (
    KeySource,
    ProviderChoice,
    edited_config,
    write_atomically,
)

CHOICE = ProviderChoice("openai", "http://127.0.0.1:8080/v1", KeySource(value="sk-k"), "m")


def test_the_edit_keeps_comments_other_tables_and_inline_tables(tmp_path: Path) -> None:
    existing = (
        "# my settings\nmodels = ['echo']\n"
        'providers = {anthropic = {api_key_env = "A"}, openai = {api_key_env = "B"}}\n\n'
        "[tools]\nmax_read_lines = 10  # short\n"
    )
    text = edited_config(existing, CHOICE)
    assert text.startswith("# my settings\n") and "max_read_lines = 10  # short" in text
    data = tomllib.loads(text)
    assert data["default_model"] == "openai:m"
    assert data["models"] == ["echo", "openai:m"]
    assert data["providers"] == {
        "anthropic": {"api_key_env": "A"},
        "openai": {"base_url": "http://127.0.0.1:8080/v1", "api_key": "sk-k"},
    }
    # The server's own reader takes it (api_key_env was replaced, not kept next to api_key).
    path = tmp_path / "c.toml"
    path.write_text(text)
    assert load_config(path).provider("openai").api_key == "sk-k"


def test_a_key_variable_replaces_a_stored_key() -> None:
    choice = ProviderChoice("anthropic", "https://api.anthropic.com", KeySource(env="K"), "c")
    text = edited_config('[providers.anthropic]\napi_key = "old"\n', choice)
    assert tomllib.loads(text)["providers"]["anthropic"] == {
        "base_url": "https://api.anthropic.com",
        "api_key_env": "K",
    }


def test_not_toml_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        edited_config("default_model = [\n", CHOICE)


def test_the_write_is_0600_and_a_failed_one_leaves_the_target_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    write_atomically(path, "a = 1\n")
    assert path.read_text() == "a = 1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    # A target that cannot be replaced (a non-empty directory): the error propagates, the
    # directory is untouched and no temporary file is left next to it.
    blocked = tmp_path / "blocked"
    (blocked / "config.toml").mkdir(parents=True)
    (blocked / "config.toml" / "keep").write_text("x")
    with pytest.raises(OSError):
        write_atomically(blocked / "config.toml", "b = 2\n")
    assert sorted(p.name for p in blocked.iterdir()) == ["config.toml"]
    assert (blocked / "config.toml" / "keep").read_text() == "x"
