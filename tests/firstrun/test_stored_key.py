"""Logout forgets the keys setup stored in the config file, and nothing else of it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from acp_server.firstrun.stored_key import forget_stored_keys

CONFIG = """\
# my settings
default_model = "openai:gpt-4o"

[providers.openai]
base_url = "https://api.example.com/v1"
api_key = "sk-typed-by-setup-1234"  # typed in setup

[providers.anthropic]
api_key_env = "MY_ANTHROPIC_KEY"

[tools]
max_result_bytes = 1000
"""


def test_the_stored_key_goes_and_the_rest_of_the_file_stays(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    assert forget_stored_keys(path) == ("openai",)
    after = path.read_text()
    assert "sk-typed-by-setup-1234" not in after and "api_key =" not in after
    assert after == CONFIG.replace('api_key = "sk-typed-by-setup-1234"  # typed in setup\n', "")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_file_without_a_key_or_no_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert forget_stored_keys(path) == ()
    assert not path.exists()
    path.write_text('[providers.anthropic]\napi_key_env = "K"\n')
    path.chmod(0o644)
    assert forget_stored_keys(path) == ()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # not rewritten


def test_a_file_that_is_not_toml_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("api_key = [unclosed\n")
    with pytest.raises(ValueError):
        forget_stored_keys(path)
    assert path.read_text() == "api_key = [unclosed\n"
