"""Ids of sessions, turns and messages: the one place they are made.

Ordinary runs get unguessable ids (`random_ids`, `new_session_id`); deterministic mode
(acp_server/determinism.py) passes a `SequentialIds` down instead, so transcripts are stable.
A leaf: imports nothing of the project.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

IdFactory = Callable[[str], str]
"""Makes the next id with a prefix such as `turn` or `msg`."""


def random_ids(prefix: str) -> str:
    """A fresh unguessable id such as `turn_1f2e3d4c5b6a7988`."""
    return f"{prefix}_{os.urandom(8).hex()}"


def new_session_id(ids: IdFactory | None = None) -> str:
    """A fresh session id: unguessable, or the next `sess_NNNN` of deterministic mode's `ids`."""
    if ids is not None:
        return ids("sess")
    return "sess_" + os.urandom(12).hex()


class SequentialIds:
    """`prefix_0001`, `prefix_0002`, ...: one counter per prefix. An `IdFactory`."""

    def __init__(self) -> None:
        self._last: dict[str, int] = {}

    def __call__(self, prefix: str) -> str:
        number = self._last.get(prefix, 0) + 1
        self._last[prefix] = number
        return f"{prefix}_{number:04d}"

    def reserve(self, ids: Iterable[str]) -> None:
        """Never hand out these ids again, nor lower numbers of their prefixes.

        A session loaded from a journal written by an earlier process already holds
        `turn_0001`...; its next turn must not reuse them.
        """
        for ident in ids:
            prefix, _, number = ident.rpartition("_")
            # At most 18 digits: int() refuses more than 4300, and a crafted journal line
            # could hold them (no id of ours comes near).
            if prefix and number.isdecimal() and len(number) <= 18:
                self._last[prefix] = max(self._last.get(prefix, 0), int(number))
