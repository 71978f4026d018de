"""Tested in tests/e2e/test_session_commands.py: a session's commands sent before the runtime
is loaded, right after the `session/new` answer."""
