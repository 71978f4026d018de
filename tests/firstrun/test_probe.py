"""The probe's model list (`acp_server/firstrun/probe.py`) asks where the provider's registry row
says, with the row's headers, against a local HTTP server, and follows a redirect only on the
same origin: the key never goes to another server. (The tiny request and each failure
kind are pinned through the real commands: tests/firstrun/test_setup.py, test_doctor.py.)"""

from __future__ import annotations

import pytest

from acp_server.firstrun.probe import ProbeFailure, list_models
from acp_server.models.providers import PROVIDERS
from tests.support.http_routes import Route, serve_routes
from tests.support.made_up_provider import MADE_UP

LISTING = {"data": [{"id": "a"}, {"id": "b"}, {"id": "a"}]}


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_the_probe_sends_what_the_provider_sends(name: str) -> None:
    row = PROVIDERS[name]
    with serve_routes({row.models_path: Route(LISTING)}) as server:
        assert list_models(name, server.url, "sk-probe") == ["a", "b"]
    sent = server.headers[0]
    assert row.auth_headers("sk-probe").items() <= sent.items()


def test_a_new_rows_models_are_listed_where_and_as_it_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(PROVIDERS, "madeup", MADE_UP)
    with serve_routes({"/api/catalogue": Route(LISTING)}) as server:
        assert list_models("madeup", server.url + "/api/", "sk-made") == ["a", "b"]
        assert list_models("madeup", server.url + "/api", None) == ["a", "b"]
    assert server.seen == ["/api/catalogue", "/api/catalogue"]
    with_key, without = server.headers
    assert with_key["x-made-up-key"] == "Key sk-made" and with_key["made-up-version"] == "7"
    assert "x-made-up-key" not in without and without["made-up-version"] == "7"


def test_a_401_without_a_key_says_the_server_needs_one() -> None:
    routes = {"/v1/models": Route({"error": "no key"}, status=401)}
    with serve_routes(routes) as server, pytest.raises(ProbeFailure) as caught:
        list_models("openai", server.url + "/v1", None)
    assert caught.value.kind == "key"
    assert caught.value.message.startswith("the server needs a key (HTTP 401)")


@pytest.mark.parametrize("name", ["anthropic", "openai"])
def test_a_redirect_to_another_server_is_reported_and_the_key_not_sent_there(name: str) -> None:
    """httpx drops `Authorization` on a redirect to another origin but not `x-api-key`: the
    Anthropic key reached the other server before. Another port is another origin."""
    row = PROVIDERS[name]
    with serve_routes({"/steal": Route(LISTING)}) as other:
        target = f"{other.url}/steal"
        redirect = Route(status=302, location=target)
        with (
            serve_routes({row.models_path: redirect}) as server,
            pytest.raises(ProbeFailure) as caught,
        ):
            list_models(name, server.url, "sk-typed-key")
    assert other.seen == []
    assert caught.value.kind == "unreachable"
    assert f"redirects (HTTP 302) to {target}, another server, which is not followed" in (
        caught.value.message
    )
    assert "sk-typed-key" not in caught.value.message


def test_a_redirect_on_the_same_server_is_followed_with_the_key() -> None:
    row = PROVIDERS["anthropic"]
    routes = {
        row.models_path: Route(status=307, location=f"{row.models_path}/"),
        f"{row.models_path}/": Route(LISTING),
    }
    with serve_routes(routes) as server:
        assert list_models("anthropic", server.url, "sk-typed-key") == ["a", "b"]
    assert server.seen == [row.models_path, f"{row.models_path}/"]
    assert server.headers[1]["x-api-key"] == "sk-typed-key"


def test_a_redirect_loop_on_the_same_server_ends() -> None:
    routes = {"/v1/models": Route(status=302, location="/v1/models")}
    with serve_routes(routes) as server, pytest.raises(ProbeFailure) as caught:
        list_models("openai", server.url + "/v1", "sk-probe")
    assert caught.value.message.endswith("redirects more than 5 times")
    assert len(server.seen) == 6
