"""The output budget of a request (acp_server/models/output.py): a provider's configured
`max_output_tokens` when it is a positive integer, else the default. The limit on the wire and a
response cut by it: tests/models/test_openai.py, tests/models/test_anthropic.py and
tests/models/test_limits.py."""

from __future__ import annotations

from typing import Any

import pytest

from acp_server.models.output import DEFAULT_OUTPUT_TOKENS, output_limit_of


class Configured:
    def __init__(self, limit: Any) -> None:
        self.max_output_tokens = limit


def test_a_configured_positive_limit_is_used() -> None:
    assert output_limit_of(Configured(512)) == 512


@pytest.mark.parametrize("limit", [None, 0, -1, True, 2.5, "1024"])
def test_anything_else_gets_the_default(limit: Any) -> None:
    assert output_limit_of(Configured(limit)) == DEFAULT_OUTPUT_TOKENS


def test_a_provider_without_the_attribute_gets_the_default() -> None:
    assert output_limit_of(object()) == DEFAULT_OUTPUT_TOKENS
