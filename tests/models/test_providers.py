"""The provider registry (`acp_server/models/providers.py`): every row is honoured by the spec
check, the config file's tables, `load_model`, the key lists that redaction and the children's
environment use, setup's first question, the probe's model list, the no-model message and the
command line's help; a new provider is one row (shown with a made-up one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_server.acp.errors import no_model_message
from acp_server.cli import build_parser
from acp_server.config import load_config
from acp_server.firstrun.probe import list_models
from acp_server.firstrun.setup import kinds
from acp_server.models.base import ModelConfigError
from acp_server.models.providers import (
    PROVIDERS,
    Provider,
    ProviderTables,
    Server,
    url_credentials,
)
from acp_server.models.spec import check_spec, load_model
from tests.support.http_routes import Route, serve_routes

MADE_UP = Provider(
    "madeup",
    key_variable="MADEUP_API_KEY",
    base_url_variable="MADEUP_BASE_URL",
    module=__name__,
    class_name="MadeUpProvider",
    hosted=Server("Made Up", "https://api.made-up.example", key_needed=True, window=1000),
    compatible=Server("A Made-Up-compatible server", "http://127.0.0.1:9/", False, 500),
    models_path="/catalogue",
    key_header="x-made-up-key",
    key_scheme="Key ",
    fixed_headers={"made-up-version": "7"},
)


class MadeUpProvider:
    """Records what `load_model` passes a provider class."""

    def __init__(self, model: str, **kwargs: Any) -> None:
        self.name = f"madeup:{model}"
        self.model = model
        self.kwargs = kwargs


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


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_every_row_is_offered_by_setup_and_named_by_the_how_to(name: str) -> None:
    row = PROVIDERS[name]
    offered = [(kind.row, kind.server) for kind in kinds()]
    assert [(row, server) for server in row.servers()] == [o for o in offered if o[0] is row]
    message = no_model_message(None)
    assert f"{name}:MODEL with the key in {row.key_variable}" in message
    assert f"{name}:MODEL, " in build_parser().format_help()


def test_setup_offers_the_hosted_apis_by_name_then_the_compatible_servers() -> None:
    assert [kind.server.label for kind in kinds()] == [
        "Anthropic",
        "OpenAI",
        "An OpenAI-compatible server (llama.cpp, vLLM, Ollama, ...)",
    ]


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
    # The first-run commands, the how-to and the help know it too.
    offered = [(kind.row.name, kind.server.label) for kind in kinds()]
    assert ("madeup", "Made Up") in offered
    assert ("madeup", "A Made-Up-compatible server") in offered[-2:]  # local servers last
    assert (
        "madeup:MODEL with the key in MADEUP_API_KEY "
        "(MADEUP_BASE_URL=http://127.0.0.1:9/ for a local server)"
    ) in no_model_message(None)
    help_text = " ".join(build_parser().format_help().split())
    assert "madeup:MODEL, script:PATH" in help_text and "MADEUP_API_KEY and every" in help_text


def test_the_probe_lists_models_where_and_as_the_row_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(PROVIDERS, "madeup", MADE_UP)
    listing = {"data": [{"id": "a"}, {"id": "b"}]}
    with serve_routes({"/api/catalogue": Route(listing)}) as server:
        assert list_models("madeup", server.url + "/api/", "sk-made") == ["a", "b"]
        assert list_models("madeup", server.url + "/api", None) == ["a", "b"]
    assert server.seen == ["/api/catalogue", "/api/catalogue"]
    with_key, without = server.headers
    assert with_key["x-made-up-key"] == "Key sk-made" and with_key["made-up-version"] == "7"
    assert "x-made-up-key" not in without and without["made-up-version"] == "7"


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_the_probe_and_the_provider_send_the_same_auth_headers(name: str) -> None:
    row = PROVIDERS[name]
    with serve_routes({row.models_path: Route({"data": [{"id": "m"}]})}) as server:
        assert list_models(name, server.url, "sk-probe") == ["m"]
    sent = server.headers[0]
    for header, value in row.auth_headers("sk-probe").items():
        assert sent[header] == value


def test_an_unregistered_provider_is_refused_everywhere(tmp_path: Path) -> None:
    assert "expected script:PATH, echo, openai:MODEL or anthropic:MODEL" in str(
        check_spec("gemini:pro")
    )
    config = tmp_path / "config.toml"
    config.write_text("[providers.gemini]\n")
    with pytest.raises(ModelConfigError, match=r"line 1: unknown provider \[providers.gemini\]"):
        load_config(config)
