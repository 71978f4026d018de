"""Tested in tests/e2e/test_server_lifecycle.py (stdio, signals, the orderly stop, stdout kept for
the protocol) and tests/e2e/test_main.py: the process itself, which only a real one shows."""
