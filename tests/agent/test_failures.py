"""A failed turn's durable error (acp_server/agent/failures.py) keeps none of the provider's text:
one fixed message, and the error's code only when it is one of ours. The same rule seen through
the bridge, beside the client's error and the log: tests/acp/test_durable_errors.py."""

from __future__ import annotations

import pytest

from acp_server.agent.failures import MODEL_FAILED, durable_error
from acp_server.models.base import ModelError
from acp_server.session.records import ErrorOutcome


@pytest.mark.parametrize("code", ["http_502", "timeout", "malformed_chunk", "a" * 40])
def test_our_codes_are_kept_and_the_message_is_fixed(code: str) -> None:
    error = ModelError("upstream said: invalid api key sk-live-0123456789abcdef", code=code)
    assert durable_error(error) == ErrorOutcome(message=MODEL_FAILED, code=code)


@pytest.mark.parametrize(
    "code",
    [None, "", "Invalid-Request", "rate limit", "a" * 41, "x\nsk-live-0123456789abcdef"],
)
def test_a_missing_or_foreign_code_becomes_model_error(code: str | None) -> None:
    error = ModelError("the server's body, which may echo a key", code=code)
    assert durable_error(error) == ErrorOutcome(message=MODEL_FAILED, code="model_error")
