"""Tested in tests/e2e/test_handshake_v2.py: the version choice, v2's initialize answer and its
repeats, auth/login and auth/logout, through the real process."""
