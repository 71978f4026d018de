"""The config file's agent settings (`max_steps`, `context_threshold`, `max_repeated_calls`)
and per-model `context_window` tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_server.agent.settings import (
    DEFAULT_MAX_REPEATED_CALLS,
    DEFAULT_MAX_STEPS,
    SubagentLimits,
    TurnLimits,
)
from acp_server.config import Config, load_config
from acp_server.models.base import ModelConfigError
from acp_server.models.budget import DEFAULT_THRESHOLD


def settings_of(tmp_path: Path, text: str) -> Config:
    config = tmp_path / "config.toml"
    config.write_text(text)
    return load_config(config)


def test_defaults_suit_long_tasks(tmp_path: Path) -> None:
    settings = settings_of(tmp_path, "")
    assert settings.turn == TurnLimits()
    assert DEFAULT_MAX_STEPS >= 100
    assert (DEFAULT_THRESHOLD, DEFAULT_MAX_REPEATED_CALLS) == (0.8, 3)


def test_agent_settings_are_read(tmp_path: Path) -> None:
    settings = settings_of(
        tmp_path,
        "max_steps = 40\ncontext_threshold = 0.5\nmax_repeated_calls = 2\nmax_failed_calls = 7\n",
    )
    assert settings.turn == TurnLimits(
        max_steps=40, context_threshold=0.5, max_repeats=2, max_failed=7
    )
    assert settings_of(tmp_path, "context_threshold = 1\n").turn.context_threshold == 1.0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("max_steps = 0\n", r"line 1: `max_steps` must be a positive integer"),
        ("max_steps = 2.5\n", r"`max_steps` must be a positive integer"),
        ("max_repeated_calls = true\n", r"`max_repeated_calls` must be a positive integer"),
        ("max_failed_calls = 0\n", r"`max_failed_calls` must be a positive integer"),
        ("context_threshold = 0\n", r"`context_threshold` must be above 0 and at most 1"),
        ("context_threshold = 1.5\n", r"above 0 and at most 1"),
        ('context_threshold = "high"\n', r"`context_threshold` must be a number"),
        ("max_step = 3\n", r"unknown key `max_step`; expected .*max_steps"),
    ],
)
def test_bad_agent_settings_name_the_key_and_line(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ModelConfigError, match=problem):
        settings_of(tmp_path, text)


def test_per_model_windows_override_the_provider(tmp_path: Path) -> None:
    settings = settings_of(
        tmp_path,
        "[providers.openai]\ncontext_window = 65536\n\n"
        '[providers.openai.models."Qwen/Qwen2.5-7B"]\ncontext_window = 8192\n',
    )
    openai = settings.provider("openai")
    assert openai.model("Qwen/Qwen2.5-7B").context_window == 8192
    assert openai.model("other").context_window == 65536
    assert settings.provider("anthropic").model("x").context_window is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[providers.openai.models."m"]\ncontext_window = -4\n', r"must be a positive integer"),
        (
            '[providers.openai.models."m"]\nread_timeout = 4\n',
            r"unknown key `read_timeout` in \[providers.openai.models.\"m\"\]",
        ),
        ("[providers.openai]\nmodels = 3\n", r"`models` must be tables"),
        ("[providers.openai]\nmodels = {m = 3}\n", r"must be a table"),
    ],
)
def test_bad_model_tables_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ModelConfigError, match=problem):
        settings_of(tmp_path, text)


def test_subagent_bounds_are_read_and_checked(tmp_path: Path) -> None:
    settings = settings_of(tmp_path, "[subagents]\nmax_depth = 1\nmax_seconds = 90\n")
    assert settings.turn.subagents == SubagentLimits(max_depth=1, max_seconds=90.0)
    with pytest.raises(ModelConfigError, match=r"\[subagents\] `max_seconds` must be positive"):
        settings_of(tmp_path, "[subagents]\nmax_seconds = 0\n")
    with pytest.raises(ModelConfigError, match=r"unknown key `depth` in \[subagents\]"):
        settings_of(tmp_path, "[subagents]\ndepth = 1\n")
