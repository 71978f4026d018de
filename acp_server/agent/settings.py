"""The runtime's limits on a turn and on subagents, and the config file keys that set them.

The file's top-level `max_steps`, `context_threshold`, `max_repeated_calls`,
`max_failed_calls` and its `[subagents]` table become one `TurnLimits`, whose fields carry the
names `AgentConfig` and `SubagentLimits` use: the CLI reads the file (`acp_server/config.py`)
and hands this value down unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from acp_server.models.output import DEFAULT_THRESHOLD

__all__ = [
    "DEFAULT_MAX_FAILED_CALLS",
    "DEFAULT_MAX_REPEATED_CALLS",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_SUBAGENT_DEPTH",
    "DEFAULT_SUBAGENT_SECONDS",
    "TURN_KEYS",
    "SubagentLimits",
    "TurnLimits",
    "turn_limits",
]

DEFAULT_MAX_STEPS = 200
"""Model requests per turn. A long agentic task (read, edit, test, fix, across many files)
takes a hundred steps or more; the limit only stops a runaway loop, which the repeated-call
check usually stops much earlier."""
DEFAULT_MAX_REPEATED_CALLS = 3
"""Repeats of one call with one result a turn may make before it ends."""
DEFAULT_MAX_FAILED_CALLS = 5
"""Consecutive failures of one tool with one kind of error a turn may have before it ends."""
DEFAULT_SUBAGENT_DEPTH = 2
"""How deep subagents nest: a client's session's child may start one more level, no deeper."""
DEFAULT_SUBAGENT_SECONDS = 600.0
"""How long one subagent may run before it is cancelled."""

TURN_KEYS = ("max_steps", "context_threshold", "max_repeated_calls", "max_failed_calls")
"""The config file's top-level keys read here (with the `[subagents]` table)."""

ConfigError = Callable[[str, str | None, str | None], Exception]
"""`error(problem, key, table)`: the exception naming the config file and the line."""


@dataclass(frozen=True, slots=True)
class SubagentLimits:
    """How deep children may nest (a child at depth `max_depth` gets no `task` tool), how
    many task calls of one parent may run at once, and how long one child may run."""

    max_depth: int = DEFAULT_SUBAGENT_DEPTH
    """Levels of subagents: a child at this depth gets no `task` tool."""
    max_concurrent: int = field(default=4, metadata={"config_key": None})
    """Task calls of one parent that run at once (not set by the config file)."""
    max_seconds: float = DEFAULT_SUBAGENT_SECONDS
    """A child still running after this long is cancelled; the task call fails saying so."""


@dataclass(frozen=True, slots=True)
class TurnLimits:
    """What the config file says about every turn (the defaults when it says nothing)."""

    max_steps: int = DEFAULT_MAX_STEPS
    """`max_steps`: model requests per turn; one more ends the turn `max_turn_requests`."""
    context_threshold: float = DEFAULT_THRESHOLD
    """`context_threshold`: compact a request above this fraction of the window."""
    max_repeats: int = field(
        default=DEFAULT_MAX_REPEATED_CALLS, metadata={"config_key": "max_repeated_calls"}
    )
    """`max_repeated_calls`: same call, same result, this many times: the turn ends."""
    max_failed: int = field(
        default=DEFAULT_MAX_FAILED_CALLS, metadata={"config_key": "max_failed_calls"}
    )
    """`max_failed_calls`: one tool failing one way this many times in a row: the turn ends."""
    subagents: SubagentLimits = field(
        default_factory=SubagentLimits, metadata={"config_table": "subagents"}
    )
    """`[subagents]`: `max_depth` and `max_seconds`."""


def turn_limits(values: Mapping[str, Any], error: ConfigError) -> TurnLimits:
    """`TurnLimits` from the file's `TURN_KEYS` and `subagents` present in `values`;
    `error(problem, key, table)` makes the exception that names the file and line."""
    limits: dict[str, Any] = {}
    for key, value in values.items():
        if key == "context_threshold":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise error("`context_threshold` must be a number", key, None)
            if not 0 < value <= 1:
                raise error("`context_threshold` must be above 0 and at most 1", key, None)
            limits[key] = float(value)
        elif key == "subagents":
            limits[key] = _subagents(value, error)
        else:
            name = {"max_repeated_calls": "max_repeats", "max_failed_calls": "max_failed"}
            limits[name.get(key, key)] = _positive_int(value, key, None, error)
    return TurnLimits(**limits)


def _positive_int(value: Any, key: str, table: str | None, error: ConfigError) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        where = f"[{table}] " if table is not None else ""
        raise error(f"{where}`{key}` must be a positive integer", key, table)
    return value


def _subagents(entry: Any, error: ConfigError) -> SubagentLimits:
    """`[subagents]`: `max_depth` (levels) and `max_seconds` (per child)."""
    if not isinstance(entry, dict):
        raise error("[subagents] must be a table", "subagents", None)
    limits: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "max_depth":
            limits[key] = _positive_int(value, key, "subagents", error)
        elif key == "max_seconds":
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise error(
                    "[subagents] `max_seconds` must be positive (seconds)", key, "subagents"
                )
            limits[key] = float(value)
        else:
            raise error(
                f"unknown key `{key}` in [subagents]; expected max_depth or max_seconds",
                key,
                "subagents",
            )
    return SubagentLimits(**limits)
