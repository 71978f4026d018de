"""The provider interface (acp_server/models/base.py): a provider's error is redacted as it is
made (it travels to the client, the journal, the log and a parent's tool result), and a subagent
gets the provider's own variant when it has one. The events each provider streams:
tests/models/test_openai.py, tests/models/test_anthropic.py, tests/models/test_script.py."""

from __future__ import annotations

from acp_server.models.base import ModelError, ModelProvider, subagent_provider
from acp_server.redaction import REDACTED


def test_a_model_error_is_redacted_as_it_is_made_and_keeps_its_code() -> None:
    error = ModelError("HTTP 401: invalid key sk-proj-AbC123_xyz-789", code="http_401")
    assert error.message == f"HTTP 401: invalid key sk-{REDACTED}"
    assert str(error) == error.message
    assert error.code == "http_401"


class Plain:
    name = "plain"


class WithChild(Plain):
    def __init__(self) -> None:
        self.child = Plain()

    def for_subagent(self) -> ModelProvider:
        return self.child  # type: ignore[return-value]


def test_a_subagent_gets_the_providers_variant_or_the_provider_itself() -> None:
    plain, parent = Plain(), WithChild()
    assert subagent_provider(plain) is plain  # type: ignore[arg-type]
    assert subagent_provider(parent) is parent.child  # type: ignore[arg-type]
