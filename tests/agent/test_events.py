"""Tested in tests/agent/test_turn_lifecycle_events.py (a turn's events, in order) and
tests/agent/test_progress.py (`ModelWaiting`): the events are plain data the loop sends."""
