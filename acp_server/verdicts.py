"""Verdicts a listener returns to the turn: a leaf that imports nothing of the project.

The runtime (`agent/seams.py`) asks for them and the permission policy (`tools/`) and the user
hooks (`extensions/`) give them; living below all three keeps `tools/` from importing `agent/`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    """A prompt-submission listener's verdict: do not open a turn."""

    reason: str


@dataclass(frozen=True)
class Deny:
    """An approval listener's verdict: do not run this tool call."""

    reason: str
