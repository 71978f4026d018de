"""Deterministic mode: reproducible ids and timestamps, so a transcript can be a golden file.

`acp-server --deterministic` (or `ACP_SERVER_DETERMINISTIC=1`) creates one `Determinism` at
start-up. Its `ids` is passed down explicitly: the ACP bridge takes session ids from it
(`sess_0001`, `sess_0002`, ...) and gives it to every agent as the id factory of turns and
messages (`turn_0001`, `msg_0001`, ...), and tool calls (`call_0001`, ...; the model's own ids
never reach the client): one counter per prefix, per process. The bridge skips session ids
whose journal exists and, if another process takes an id first, the next one: ids never collide
on a shared data directory and stay reproducible on one of their own.

Timestamps are the one process-wide piece: `install()` sets the clock that
`acp_server.session.records.utc_now` reads, a `SteppingClock` that starts at
2026-01-01T00:00:00.000Z and advances 1 ms per reading. A global is acceptable here because
the clock is configuration, like a random seed: it is chosen once before anything runs, never
changes afterwards, and holds no turn or session state. Threading it through every record
constructor instead would touch every layer for a value that only tests and fixtures change.

Ordinary runs never import this module: ids stay unguessable and time stays real.
"""

from __future__ import annotations

import datetime
import itertools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from acp_server.ids import SequentialIds

ENV_VAR = "ACP_SERVER_DETERMINISTIC"
"""Set to 1 (or true/yes/on) to enable deterministic mode without the flag."""

EPOCH_MS = 1_767_225_600_000
"""2026-01-01T00:00:00.000Z, the first reading of the deterministic clock."""

_TRUE = frozenset({"1", "true", "yes", "on"})


def requested(flag: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether deterministic mode is on: the flag, or the environment variable set to 1."""
    return flag or environ.get(ENV_VAR, "").strip().lower() in _TRUE


def today() -> str:
    """The date the model is told under deterministic mode: the clock's first day."""
    return datetime.datetime.fromtimestamp(EPOCH_MS / 1000, datetime.UTC).date().isoformat()


class SteppingClock:
    """Milliseconds since the Unix epoch: `start_ms` at the first reading, then `step_ms` more
    at each following one."""

    def __init__(self, start_ms: int = EPOCH_MS, step_ms: int = 1) -> None:
        self._readings = itertools.count()
        self._start_ms = start_ms
        self._step_ms = step_ms

    def __call__(self) -> int:
        return self._start_ms + next(self._readings) * self._step_ms


@dataclass(frozen=True)
class Determinism:
    """What deterministic mode replaces: the id factory (passed down) and the clock."""

    ids: SequentialIds = field(default_factory=SequentialIds)
    clock: SteppingClock = field(default_factory=SteppingClock)


def install() -> Determinism:
    """Create the process's `Determinism` and install its clock for `utc_now`. Call once, at
    start-up, before any session exists."""
    from acp_server.session.records import set_clock

    determinism = Determinism()
    set_clock(determinism.clock)
    return determinism


__all__ = ["ENV_VAR", "EPOCH_MS", "Determinism", "SteppingClock", "install", "today"]
