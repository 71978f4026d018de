"""Tested in tests/e2e/test_sessions.py: the sessions a connection knows, opened, loaded, closed
and deleted through the real process."""
