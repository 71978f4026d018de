"""Tested in tests/agent/test_loop.py (outcomes, the shape of `turn/end`, a failing flush) and
tests/agent/test_turn_lifecycle_events.py (`TurnSettled` after the flush)."""
