"""The provider registry (`acp_server/models/providers.py`): every row is honoured by the spec
check, the config file's tables, `load_model` and the key lists that redaction and the children's
environment use; a new provider is one row (shown with a made-up one). Setup, the probe, the
no-model message and the help read the rows too: tests/test_provider_facts.py and
tests/firstrun/test_probe.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_server.config import load_config
from acp_server.models.base import ModelConfigError
from acp_server.models.providers import PROVIDERS, ProviderTables, url_credentials
from acp_server.models.spec import check_spec, load_model
from tests.support.made_up_provider import MADE_UP, MadeUpProvider


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_every_row_is_a_spec_a_table_and_a_key(name: str, tmp_path: Path) -> None:
    row = PROVIDERS[name]
    assert check_spec(f"{name}:m") is None
    config = tmp_path / "config.toml"
    config.write_text(f'[providers.{name}]\napi_key_env = "MY_KEY"\n')
    tables = load_config(config).providers
    assert tables.key_variables() == {r.key_variable for r in PROVIDERS.values()} | {"MY_KEY"}
    env = {row.base_url_variable: "https://user:pw-secret@host.example/v1", "MY_KEY": "k"}
    provider: Any = load_model(f"{name}:m", tables, environ=env)
    assert type(provider).__name__ == row.class_name
    assert provider.endpoint.base_url_env == row.base_url_variable
    assert provider.endpoint.key_env == "MY_KEY"
    assert url_credentials(env) == {row.base_url_variable: "user:pw-secret"}
    # Without a table: the row's own key variable, and the row's public endpoint.
    plain: Any = load_model(f"{name}:m", ProviderTables(), environ={})
    assert plain.endpoint.key_env == row.key_variable
    assert plain.endpoint.base_url == row.hosted.base_url


def test_a_new_provider_is_one_row(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(PROVIDERS, "madeup", MADE_UP)
    assert check_spec("madeup:m") is None
    config = tmp_path / "config.toml"
    config.write_text('default_model = "madeup:m"\n[providers.madeup]\nbase_url = "http://h/v1"\n')
    tables = load_config(config).providers
    assert "MADEUP_API_KEY" in tables.key_variables()
    environ = {"MADEUP_API_KEY": "sk-made-up", "MADEUP_BASE_URL": "https://u:p@h/"}
    assert "MADEUP_BASE_URL" in url_credentials(environ)
    provider = load_model("madeup:m", tables, environ=environ)
    assert isinstance(provider, MadeUpProvider)
    assert provider.kwargs["api_key"] == "sk-made-up"
    assert provider.kwargs["base_url"] == "https://u:p@h/"  # the variable beats the table


def test_an_unregistered_provider_is_refused_everywhere(tmp_path: Path) -> None:
    assert "expected script:PATH, echo, openai:MODEL or anthropic:MODEL" in str(
        check_spec("gemini:pro")
    )
    config = tmp_path / "config.toml"
    config.write_text("[providers.gemini]\n")
    with pytest.raises(ModelConfigError, match=r"line 1: unknown provider \[providers.gemini\]"):
        load_config(config)


def test_a_rows_servers_auth_headers_and_models_url() -> None:
    openai, anthropic = PROVIDERS["openai"], PROVIDERS["anthropic"]
    assert openai.server_at("https://api.openai.com/v1/") is openai.hosted
    assert openai.server_at("http://127.0.0.1:8080/v1") is openai.compatible
    # Without compatible servers, any base URL (a proxy) is the provider's own API.
    assert anthropic.server_at("https://proxy.example") is anthropic.hosted
    assert openai.auth_headers("k") == {"authorization": "Bearer k"}
    assert openai.auth_headers(None) == openai.auth_headers("") == {}
    assert anthropic.auth_headers("k") == {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    assert anthropic.auth_headers(None) == {"anthropic-version": "2023-06-01"}
    assert openai.models_url("http://h/v1/") == "http://h/v1/models"
    assert anthropic.models_url("https://h") == "https://h/v1/models"
    assert MADE_UP.servers() == (MADE_UP.hosted, MADE_UP.compatible)
