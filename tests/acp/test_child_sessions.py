"""Tested in tests/e2e/test_child_sessions_acp.py: `task` children as child sessions (announced,
linked, their own updates, cancelled alone), through the real process with raw frames."""
