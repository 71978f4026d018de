"""Deterministic ids skip those a loaded journal holds; a journal line may hold anything."""

from __future__ import annotations

from acp_server.ids import SequentialIds


def test_reserve_skips_the_ids_of_a_journal_and_ignores_absurd_ones() -> None:
    ids = SequentialIds()
    ids.reserve(["turn_0003", "msg_" + "1" * 5000, "msg_٣", "odd", "msg_x"])
    assert ids("turn") == "turn_0004"
    assert ids("msg") == "msg_0004"  # '٣' is a decimal digit (3); 5000 digits is no id of ours
