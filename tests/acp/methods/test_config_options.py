"""Tested in tests/e2e/test_modes.py (set_mode, the `mode` option, `/mode`) and
tests/e2e/test_session_commands.py (`/model`), through the real process."""
