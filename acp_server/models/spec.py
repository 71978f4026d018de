"""`--model SPEC` -> a provider: `script:PATH`, `echo` (others are not in this build yet)."""

from __future__ import annotations

from acp_server.models.base import ModelConfigError, ModelProvider
from acp_server.models.script import echo_provider, load_script

_EXPECTED = "expected script:PATH, echo, openai:MODEL or anthropic:MODEL"
_NOT_YET = ("openai", "anthropic")


def load_model(spec: str) -> ModelProvider:
    """Build the provider named by `spec`, reading any script file now.

    Raises ModelConfigError with a message fit for the command line.
    """
    if spec == "echo":
        return echo_provider()
    prefix, colon, rest = spec.partition(":")
    if colon and prefix == "script":
        if not rest:
            raise ModelConfigError("model spec 'script:' needs a path: script:PATH")
        return load_script(rest)
    if colon and prefix in _NOT_YET:
        raise ModelConfigError(
            f"model spec {spec!r}: {prefix} models are not available in this build"
        )
    raise ModelConfigError(f"unknown model spec {spec!r}; {_EXPECTED}")
