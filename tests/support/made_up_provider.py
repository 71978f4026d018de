"""A made-up provider row and class, for the tests that show a new provider is one row: add
`MADE_UP` to `PROVIDERS` (`monkeypatch.setitem`) and every reader of the registry finds it."""

from __future__ import annotations

from typing import Any

from acp_server.models.providers import Provider, Server

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
