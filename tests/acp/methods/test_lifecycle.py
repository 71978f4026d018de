"""Tested in tests/e2e/test_sessions.py (load, resume, close, delete, broken or busy journals)
and tests/e2e/test_session_fork.py, through the real process."""
