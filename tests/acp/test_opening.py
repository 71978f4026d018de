"""Tested in tests/e2e/test_ready.py (`session/new` answered before the runtime loads) and
tests/e2e/test_handshake.py (its params checked, its answer)."""
